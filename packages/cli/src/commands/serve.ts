import { statSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { CliError } from '../lib/errors.js';
import { ensureUrlSchemes, isUrl } from '../lib/bag-io.js';
import { examples } from '../lib/filter-flags.js';
import { parseNonNegativeInteger, parsePort } from '../lib/parse.js';

interface ServeFlags {
  host: string;
  port: number;
  token?: string;
  cors?: boolean;
  allowOrigin?: string[];
  allowHost?: string[];
  workers?: number;
  catalog?: string;
  export?: string;
  quiet?: boolean;
  json?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('serve a directory of bags over HTTP (REST, NDJSON, replay and Foxglove WebSockets) until Ctrl-C')
    .argument('<dir>', 'directory whose bags are served (recursively), or an s3://bucket/prefix')
    .option('--host <host>', 'interface to bind; anything but loopback needs --token', '127.0.0.1')
    .addOption(new Option('--port <port>', 'port (0 picks a free one)').argParser(parsePort).default(8765))
    .addOption(new Option('--token <token>', 'require Authorization: Bearer <token>').env('VLINK_BAG_TOKEN'))
    .option(
      '--allow-origin <origin>',
      "a browser origin (besides the server's own) that may use the API and its WebSockets, e.g. https://app.foxglove.dev for Foxglove Studio; repeatable",
      collect,
    )
    .option(
      '--allow-host <name>',
      'another host name (or name:port) clients may reach the server by, e.g. behind a proxy; repeatable',
      collect,
    )
    .option('--cors', 'send CORS headers for the --allow-origin origins (for any origin only with --token)')
    .addOption(
      new Option('--workers <n>', 'worker threads reading bags (default: one per core, at most 8; 0 = none)').argParser(
        parseNonNegativeInteger,
      ),
    )
    .option('--catalog <dir>', 'a lake catalog folder to answer SQL over (POST /v1/query: views bags, urls)')
    .option('--export <dir>', 'a lake export folder to answer SQL over (POST /v1/query: view messages)')
    .option('--json', 'print {"url","root"} as one JSON line once listening (instead of the sentence)')
    .option('-q, --quiet', 'do not print the address')
    .action(async (dir: string, flags: ServeFlags) => {
      if (isUrl(dir)) await ensureUrlSchemes(dir);
      else {
        let isDir = false;
        try {
          isDir = statSync(dir).isDirectory();
        } catch {
          throw new CliError('no such directory', dir);
        }
        if (!isDir) throw new CliError('is not a directory', dir);
      }
      for (const [flag, folder] of [
        ['--catalog', flags.catalog],
        ['--export', flags.export],
      ] as const) {
        if (folder !== undefined && !isDirectory(folder)) throw new CliError(`no such ${flag} directory`, folder);
      }
      // Loaded on demand: the server stack (Hono, zod, OpenAPI) would slow every other verb's start.
      const { serve } = await import('@vlink/bag-server');
      const server = await serve({
        root: dir,
        host: flags.host,
        port: flags.port,
        ...(flags.token ? { token: flags.token } : {}),
        ...(flags.cors ? { cors: true } : {}),
        ...(flags.allowOrigin ? { allowOrigins: flags.allowOrigin } : {}),
        ...(flags.allowHost ? { allowHosts: flags.allowHost } : {}),
        ...(flags.workers === undefined ? {} : { workers: flags.workers }),
        ...(flags.catalog === undefined && flags.export === undefined
          ? {}
          : {
              lake: {
                ...(flags.catalog === undefined ? {} : { catalog: flags.catalog }),
                ...(flags.export === undefined ? {} : { export: flags.export }),
                // DuckDB loads on the first query, from the CLI's own dependency
                open: async (folders) => (await import('@vlink/bag-lake')).openLake(folders),
              },
            }),
      });
      if (flags.json) process.stdout.write(`${JSON.stringify({ url: server.url, root: dir })}\n`);
      else if (!flags.quiet) {
        process.stdout.write(
          `Serving ${dir} on ${server.url} (${server.runtime}); API docs at ${server.url}/v1/docs. Ctrl-C to stop.\n`,
        );
      }
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
    });
  examples(command, [
    'vlink-bag serve /data/bags',
    'vlink-bag serve /data/bags --host 0.0.0.0 --port 8080 --token s3cret',
    'vlink-bag serve s3://fleet/2026-12 --port 8080',
    'vlink-bag serve /data/bags --allow-origin https://app.foxglove.dev',
    'vlink-bag serve /data/bags --catalog /data/lake/catalog --export /data/lake/export --token s3cret',
  ]);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
