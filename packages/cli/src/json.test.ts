import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { createProgram } from './program.js';
import { CLI, cliArgs, cliEnv, fixtureFrames, ndjson, runCli, SLOW, tempDir, writeBag } from './testing/harness.js';

/** Every verb's `--json` output, validated against the schema the docs print (lib/json-schemas.ts). */
const tmp = tempDir();
const vdb = tmp.path('drive.vdb');
const vcap = tmp.path('drive.vcap');

// ajv ships CommonJS: under some runtimes the class is the default export's `default`.
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });

before(async () => {
  await writeBag(vdb);
  await writeBag(vcap);
});
after(() => tmp.cleanup());

function validate(verb: string, value: unknown): void {
  const schema = JSON_SCHEMAS[verb];
  assert.ok(schema, `no schema for ${verb}`);
  const check = ajv.compile(schema);
  assert.ok(check(value), `${verb}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
}

async function json(args: string[], input?: string): Promise<unknown> {
  const r = await runCli(args, input === undefined ? {} : { input });
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  // stderr keeps warnings (stdout is the document); no progress or summary lines there.
  assert.deepEqual(
    r.stderr.split('\n').filter((line) => line !== '' && !line.includes(': warning: ')),
    [],
    'only warnings on stderr with --json',
  );
  return JSON.parse(r.stdout);
}

describe('--json on every verb', () => {
  test('every verb has --json and a schema', () => {
    for (const command of createProgram().commands) {
      assert.ok(JSON_SCHEMAS[command.name()], `${command.name()} has a schema`);
      assert.ok(
        command.options.some((option) => option.long === '--json'),
        `${command.name()} has --json`,
      );
    }
  });

  test('the schemas reject what they must (they are not vacuous)', () => {
    const check = ajv.compile(JSON_SCHEMAS['clone']!);
    assert.equal(check({ source: 'a', output: 'b', frames: -1, bytes: 0, warnings: [] }), false);
    assert.equal(check({ source: 'a', output: 'b', frames: 1, bytes: 0 }), false);
    assert.equal(ajv.compile(JSON_SCHEMAS['cat']!)({ timestamp: 1, url: '/a' }), false);
  });

  test('info, cat, check, tag, reindex', SLOW, async () => {
    validate('info', await json(['info', vdb, '--json']));
    validate('info', await json(['info', vcap, '--json', '--gaps=2']));
    const cat = await runCli(['cat', vdb, '--json', '-u', '/camera,/imu']);
    assert.equal(cat.code, 0, cat.stderr);
    const lines = ndjson(cat.stdout);
    assert.equal(lines.length, fixtureFrames().filter((f) => f.url === '/camera' || f.url === '/imu').length);
    for (const line of lines) validate('cat', line);
    validate('check', await json(['check', vdb, '--json']));
    const copy = tmp.path('tagged.vdb');
    copyFileSync(vdb, copy);
    const tag = await json(['tag', copy, 'new-tag', '--json']);
    validate('tag', tag);
    assert.deepEqual(tag, { path: copy, tag: 'new-tag' });
    validate('reindex', await json(['reindex', copy, '--json']));
  });

  test('clone, split, merge, record, play', SLOW, async () => {
    const clone = (await json(['clone', vdb, tmp.path('c.vcap'), '--json', '-k', '/none'])) as { warnings: string[] };
    validate('clone', clone);
    assert.deepEqual(clone.warnings, ['no url /none in this bag (-k)']);
    validate('split', await json(['split', '-f', vdb, '-o', tmp.path('s.vdb'), '-b', '1', '--json']));
    const merged = (await json(['merge', vdb, vcap, '-o', tmp.path('m.vdb'), '--json'])) as { frames: number };
    validate('merge', merged);
    assert.equal(merged.frames, 400);
    const input = (await runCli(['cat', vdb])).stdout;
    const record = (await json(['record', '--stdin', tmp.path('r.vdb'), '--json'], input)) as { frames: number };
    validate('record', record);
    assert.equal(record.frames, 200);
    const play = (await json(['play', vdb, '--json', '--force-delay', '0', '-u', '/imu'])) as { frames: number };
    validate('play', play);
    assert.equal(play.frames, fixtureFrames().filter((f) => f.url === '/imu').length);
  });

  test('fix and recover (both report shapes)', SLOW, async () => {
    const copy = tmp.path('fix.vdb');
    copyFileSync(vdb, copy);
    validate('fix', await json(['fix', copy, '--json']));
    const rebuilt = (await json(['fix', copy, '--json', '--rebuild', '--yes'])) as { frames: number };
    validate('fix', rebuilt);
    assert.equal(rebuilt.frames, 200);
    validate('recover', await json(['recover', '-f', vdb, '-o', tmp.path('rec.vdb'), '--json']));
  });

  test('serve prints one JSON line once listening', SLOW, async () => {
    const child = spawn(CLI[0], cliArgs(['serve', tmp.dir, '--port', '0', '--json']), {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`no line; got ${JSON.stringify(text)}`)), 30_000);
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          if (text.includes('\n')) {
            clearTimeout(timer);
            resolve(text.slice(0, text.indexOf('\n')));
          }
        });
      });
      const value = JSON.parse(line) as { url: string; root: string };
      validate('serve', value);
      assert.match(value.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(value.root, tmp.dir);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
