import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from '@vlink/fixtures/test';
import { fixturePath } from '@vlink/fixtures';
import { BIN, cliEnv, SLOW, tempDir, writeBag } from './testing/harness.js';

// What a start of the CLI loads. Each ESM module costs Node about a millisecond, and the libraries of the foreign
// readers, the payload decoder, the aligner and DuckDB made `vlink-bag --help` take 0.7 s; they are now imported by
// the commands and readers that use them. These tests keep it so: a module-loader hook in the CLI's process lists
// every module it loads. Node only: Bun and Deno have no loader hooks (and load these libraries faster).
const nodeOnly = (process.versions['bun'] || 'Deno' in globalThis) && 'module loader hooks are a Node API';

// The hook appends each module's url to a file, synchronously: it runs on a thread of its own, whose writes to stderr
// the CLI's process.exit can cut short.
const HOOKS = `data:text/javascript,${encodeURIComponent(
  "import { appendFileSync } from 'node:fs'; export async function load(url, context, next) { appendFileSync(process.env.VLINK_LOADED_LOG, url + '\\n'); return next(url, context); }",
)}`;
const REGISTER = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(HOOKS)});`,
)}`;

/** The urls of the modules `vlink-bag …args` loads; the CLI's own program among them, or the hook saw nothing. */
function modulesLoadedBy(args: readonly string[]): string[] {
  const tmp = tempDir();
  try {
    const log = tmp.path('loaded.txt');
    const run = spawnSync(process.execPath, ['--import', REGISTER, BIN, ...args], {
      encoding: 'utf8',
      env: cliEnv({ VLINK_LOADED_LOG: log }),
    });
    assert.equal(run.status, 0, run.stderr);
    const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    assert.ok(
      urls.some((url) => /\/cli\/dist(-test)?\/program\.js$/.test(url)),
      'the hook saw the CLI load its program',
    );
    return urls;
  } finally {
    tmp.cleanup();
  }
}

/** Modules no start of the CLI needs unless the command uses them, by a piece of their url. */
const HEAVY = [
  '/node_modules/@bufbuild/protobuf/',
  '/node_modules/yaml/',
  '/node_modules/@foxglove/rosmsg/',
  '/node_modules/@foxglove/ulog/',
  '/node_modules/hyparquet-writer/',
  '/node_modules/@duckdb/',
  '/backend-interop/dist/ros1/',
  '/backend-interop/dist/ulog/',
  '/decode/dist/payload-decoder.js',
  '/align/dist/align.js',
];
const heavyIn = (urls: readonly string[]) => HEAVY.filter((part) => urls.some((url) => url.includes(part)));

describe('what a start of the CLI loads', { skip: nodeOnly }, () => {
  test('--help loads none of the readers, decoders, aligner or DuckDB', SLOW, () => {
    assert.deepEqual(heavyIn(modulesLoadedBy(['--help'])), []);
  });

  test('info and cat of a .vcap load none of them either', SLOW, async () => {
    const tmp = tempDir();
    try {
      const path = tmp.path('small.vcap');
      await writeBag(path);
      assert.deepEqual(heavyIn(modulesLoadedBy(['info', path])), []);
      assert.deepEqual(heavyIn(modulesLoadedBy(['cat', path, '--format', 'ndjson'])), []);
    } finally {
      tmp.cleanup();
    }
  });

  test('a ROS 1 bag loads its reader, and cat --decode the decoder, when they are used', SLOW, () => {
    const bag = fixturePath('foreign', 'ros1', 'plain.bag');
    const urls = modulesLoadedBy(['cat', bag, '--decode', '--format', 'ndjson']);
    assert.ok(
      urls.some((url) => url.includes('/backend-interop/dist/ros1/')),
      'the ROS 1 reader',
    );
    assert.ok(
      urls.some((url) => url.includes('/decode/dist/payload-decoder.js')),
      'the payload decoder',
    );
  });
});
