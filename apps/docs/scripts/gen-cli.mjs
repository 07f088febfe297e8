// reference/cli.md from the CLI's own `--help` of the program and of every verb, so the page cannot drift from the
// flags the binary really accepts. Needs packages/cli built (turbo builds it first: @vlink/docs depends on it).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
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
