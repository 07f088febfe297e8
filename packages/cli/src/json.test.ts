import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ActionType, BagWriter, REPORT_JSON_SCHEMA, SchemaType, SUMMARY_JSON_SCHEMA } from '@vlink/bag';
import { fixturePath } from '@vlink/fixtures';
import { describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { createProgram } from './program.js';
import { CLI, cliArgs, cliEnv, fixtureFrames, ndjson, runCli, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

/** Every verb's `--json` output, validated against the schema the docs print (lib/json-schemas.ts). */
const { tmp, vdb, vcap } = sampleBags();

// ajv ships CommonJS: under some runtimes the class is the default export's `default`.
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });

function validate(verb: string, value: unknown): void {
  const schema = JSON_SCHEMAS[verb];
  assert.ok(schema, `no schema for ${verb}`);
  const check = ajv.compile(schema);
  assert.ok(check(value), `${verb}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
}

describe('the summary document (sidecar <file>.json and info --json)', () => {
  test('sidecars written at close validate against the schema; the docs carry the same schema', SLOW, async () => {
    const docs = fileURLToPath(new URL('../../../apps/docs/reference/summary.schema.json', import.meta.url));
    assert.deepEqual(JSON.parse(readFileSync(docs, 'utf8')), JSON.parse(JSON.stringify(SUMMARY_JSON_SCHEMA)));
    const check = ajv.compile(SUMMARY_JSON_SCHEMA);
    for (const name of ['sidecar.vdbx', 'sidecar.vcap', 'empty.vdb']) {
      const path = tmp.path(name);
      const writer = await BagWriter.create(path, { splitBySize: 4096 });
      const frames = name.startsWith('empty') ? 0 : 40;
      for (let i = 0; i < frames; i++)
        writer.push({
          timestamp: i * 1000,
          publishTime: i * 1000 - 7,
          url: i % 2 ? '/a' : '/b',
          data: new Uint8Array(300).fill(i),
          serType: 'raw',
          schemaType: SchemaType.Raw,
          actionType: i % 4 === 3 ? ActionType.Subscribe : ActionType.Publish,
        });
      writer.count('/a', 'missedSlot', 3);
      await writer.close();
      const sidecar = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
      assert.ok(check(sidecar), `${name}: ${ajv.errorsText(check.errors)}`);
      assert.deepEqual(sidecar.counters, { '/a': { missedSlot: 3 } });
      assert.equal(
        sidecar.streams.reduce((n: number, s: { count: number }) => n + s.count, 0),
        frames,
      );
      if (frames > 0)
        assert.deepEqual(
          sidecar.streams.map((s: { url: string; action: string; firstPublishUs: number }) => [
            s.url,
            s.action,
            s.firstPublishUs,
          ]),
          [
            ['/a', 'Pub', 993],
            ['/a', 'Sub', 2993],
            ['/b', 'Pub', -7],
          ],
        );
      // info --json gives the same document (the path as given on the command line).
      assert.deepEqual(await json(['info', path, '--json']), sidecar);
    }
  });

  test('fix rewrites the sidecar', SLOW, async () => {
    const path = tmp.path('refix.vcap');
    const writer = await BagWriter.create(path, { summary: false });
    writer.push({
      timestamp: 5,
      url: '/x',
      data: new Uint8Array(3),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
    await writer.close();
    assert.throws(() => readFileSync(`${path}.json`), { code: 'ENOENT' });
    const fixed = await runCli(['fix', path, '--yes']);
    assert.equal(fixed.code, 0, fixed.stderr);
    const sidecar = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
    assert.deepEqual(await json(['info', path, '--json']), sidecar);
    assert.deepEqual(
      sidecar.streams.map((s: { url: string; count: number }) => [s.url, s.count]),
      [['/x', 1]],
    );
  });

  test('info --json of foreign bags validates too', SLOW, async () => {
    for (const foreign of [fixturePath('foreign', 'ros1', 'lz4.bag'), fixturePath('foreign', 'ros2', 'sqlite3')])
      validate('info', await json(['info', foreign, '--json']));
  });
});

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

  test('report: the schema the docs carry; groups given on the command line', SLOW, async () => {
    const docs = fileURLToPath(new URL('../../../apps/docs/reference/report.schema.json', import.meta.url));
    assert.deepEqual(JSON.parse(readFileSync(docs, 'utf8')), JSON.parse(JSON.stringify(REPORT_JSON_SCHEMA)));
    const report = (await json(['report', vdb, '--json', '--group', '/camera,/imu', '--bins', '5'])) as {
      groups: Array<{ source: string; reference: string; members: Array<{ url: string }> }>;
      streams: Array<{ intervalHistogram: { counts: number[] } | null }>;
    };
    validate('report', report);
    assert.deepEqual(
      report.groups.map((g) => [g.source, g.reference, g.members.map((m) => m.url)]),
      [['given', '/camera', ['/imu']]],
    );
    assert.ok(report.streams.every((s) => s.intervalHistogram === null || s.intervalHistogram.counts.length === 5));
    const text = await runCli(['report', vdb]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /Interval histograms/);
    const unknown = await runCli(['report', vdb, '--group', '/camera,/nope']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /\/nope/);
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
