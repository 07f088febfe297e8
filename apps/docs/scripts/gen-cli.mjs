// reference/cli.md from the CLI's own `--help` of the program and of every verb, so the page cannot drift from the
// flags the binary really accepts. Needs packages/cli built (turbo builds it first: @vlink/docs depends on it).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { fail, fromDocs, fromRoot, generatedBy, rebaseLinks, vueSafe, writeIfChanged } from './lib.mjs';

const run = promisify(execFile);
const SCRIPT = 'gen-cli.mjs';
const bin = fromRoot('packages/cli/dist/bin.js');

async function help(args) {
  // Piped stdout: commander wraps at 80 columns, the same on every machine.
  try {
    const { stdout } = await run(process.execPath, [bin, ...args, '--help'], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    return stdout.trimEnd();
  } catch (error) {
    fail(SCRIPT, `vlink-bag ${args.join(' ')} --help failed: ${error.stderr || error.message}`);
  }
}

export async function generate() {
  if (!existsSync(bin)) fail(SCRIPT, `${bin} is missing: run \`npm run build\` at the repo root first`);
  const top = await help([]);
  // The "Commands:" section lists each verb at a two-space indent; `help` is commander's own.
  const commands = top.slice(top.indexOf('Commands:'));
  const verbs = [...commands.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1]).filter((verb) => verb !== 'help');
  if (verbs.length < 5) fail(SCRIPT, `found only ${verbs.length} verbs in \`vlink-bag --help\`:\n${top}`);
  const pages = await Promise.all(verbs.map((verb) => help([verb])));
  const version = (await run(process.execPath, [bin, '--version'])).stdout.trim();
  // One JSON Schema per verb's --json output: the same objects the CLI tests validate real output against.
  const { JSON_SCHEMAS } = await import(pathToFileURL(fromRoot('packages/cli/dist/lib/json-schemas.js')).href);
  // VLink / Apollo / ours: the table whose every example the CLI tests run (src/compat.test.ts).
  const { compatMarkdown } = await import(pathToFileURL(fromRoot('packages/cli/dist/lib/compat.js')).href);

  const text = [
    '---',
    'outline: [2, 2]',
    '---',
    '',
    generatedBy(SCRIPT, '`vlink-bag --help` and `vlink-bag <verb> --help`'),
    '',
    '# CLI reference',
    '',
    `The \`vlink-bag\` command (package \`@vlink/bag-cli\`, version ${version}). Everything below is the program's own`,
    '`--help` output, captured while the docs were built. The conventions (times in seconds on the command line, µs in',
    'NDJSON, exit codes 0/1/2, never overwriting silently) and a tour of the verbs are in',
    '[the CLI guide](../guide/cli).',
    '',
    '```sh',
    'npm i -g @vlink/bag-cli      # or, in this repository after `npm run build`: npx vlink-bag …',
    '```',
    '',
    '| Verb | |',
    '| --- | --- |',
    ...verbs.map(
      (verb, i) =>
        `| [\`vlink-bag ${verb}\`](#vlink-bag-${verb}) | ${vueSafe(summaryOf(pages[i])).replace(/\|/g, '\\|')} |`,
    ),
    '',
    '## Coming from VLink or Apollo {#compatibility}',
    '',
    "What VLink's `vlink-bag` and Apollo's `cyber_recorder` flags do here. Every row with an example is run by the CLI",
    'tests on Node, Bun and Deno; the reasons for the two deliberate differences (`fix -y`, ↑/↓ in `play`) are in',
    '[the CLI guide](../guide/cli#coming-from-vlink-or-apollo).',
    '',
    vueSafe(compatMarkdown()),
    '',
    '## `vlink-bag --help`',
    '',
    '```text',
    top,
    '```',
    ...verbs.flatMap((verb, i) => [
      '',
      `## \`vlink-bag ${verb}\` {#vlink-bag-${verb}}`,
      '',
      '```text',
      pages[i],
      '```',
    ]),
    '',
    '## JSON output {#json-output}',
    '',
    'Every verb takes `--json` and then prints one JSON document on stdout (`cat --json`: one frame object per line;',
    '`serve --json`: one line once listening); warnings stay on stderr, progress and summaries are off. The schemas',
    '(JSON Schema 2020-12) below are the ones the CLI tests validate real output against',
    '(`packages/cli/src/lib/json-schemas.ts`).',
    ...Object.entries(JSON_SCHEMAS).flatMap(([verb, schema]) => [
      '',
      `### \`vlink-bag ${verb} --json\` {#json-${verb.replace(/ /g, '-')}}`,
      '',
      '```json',
      JSON.stringify(
        { $schema: 'https://json-schema.org/draft/2020-12/schema', title: `vlink-bag ${verb} --json`, ...schema },
        null,
        2,
      ),
      '```',
    ]),
    '',
  ].join('\n');
  writeIfChanged(fromDocs('reference/cli.md'), text);
  writeIfChanged(fromDocs('guide/cli.md'), guide());
  return `${verbs.length} verbs`;
}

/**
 * guide/cli.md: the CLI README's prose (tour, conventions, NDJSON shape, verbs), without its own copy of the
 * --help reference (the reference page has the live one) and without the notes for contributors.
 */
function guide() {
  const readme = readFileSync(fromRoot('packages/cli/README.md'), 'utf8');
  const cut = (text, heading) => (text.indexOf(heading) >= 0 ? text.slice(0, text.indexOf(heading)) : text);
  const body = cut(cut(readme, '\n## Reference'), '\n## Design notes')
    .replace(/^# .*\n/, '')
    .trim();
  return [
    generatedBy(SCRIPT, 'packages/cli/README.md'),
    '',
    '# The command line',
    '',
    'Every flag of every verb: [CLI reference](../reference/cli).',
    '',
    vueSafe(rebaseLinks(body, 'packages/cli', 'guide')),
    '',
  ].join('\n');
}

/** Commander prints `Usage: …`, a blank line, then the description (possibly wrapped over several lines). */
function summaryOf(helpText) {
  const lines = helpText.split('\n');
  const start = lines.findIndex((line, i) => i > 0 && line.trim() !== '');
  const out = [];
  for (let i = start; i < lines.length && lines[i].trim() !== '' && !lines[i].endsWith(':'); i++)
    out.push(lines[i].trim());
  return out.join(' ');
}
