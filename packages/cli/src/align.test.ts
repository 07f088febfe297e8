import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';
import { after, before, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { parseBase, parseMatches, parseTolerance } from './commands/align.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { runCli, SLOW, START_MS, tempDir } from './testing/harness.js';

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });

const tmp = tempDir();
after(() => tmp.cleanup());
const encoder = new TextEncoder();

/** /cam at 0, 100, 200 ms; /state at 90, 160, 290 ms with x = 1, 2, 3 (JSON payloads). */
async function episode(path: string): Promise<void> {
  const writer = await BagWriter.create(path, { maxQueueTimeMs: 0, startTimestamp: START_MS });
  const frames = [
    ...[0, 100_000, 200_000].map((t, i) => ['/cam', t, { seq: i }] as const),
    ...[90_000, 160_000, 290_000].map((t, i) => ['/state', t, { x: i + 1 }] as const),
  ].sort((a, b) => a[1] - b[1]);
  for (const [url, timestamp, value] of frames) {
    await writer.write({
      timestamp,
      url,
      data: encoder.encode(JSON.stringify(value)),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
}

const ep1 = tmp.path('ep1.vcap');
const ep2 = tmp.path('ep2.vdb');
before(async () => {
  await episode(ep1);
  await episode(ep2);
});

const iso = (us: number) => {
  const ms = START_MS + Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(us % 1000).padStart(3, '0')}Z`;
};

describe('vlink-bag align', () => {
  test('the flag parsers', () => {
    assert.deepEqual(parseBase('30hz'), { rateHz: 30 });
    assert.deepEqual(parseBase('12.5'), { rateHz: 12.5 });
    assert.deepEqual(parseBase('/camera/front'), { url: '/camera/front' });
    assert.equal(parseTolerance('20ms'), 20_000);
    assert.equal(parseTolerance('500us'), 500);
    assert.equal(parseTolerance('0.02'), 20_000);
    assert.throws(() => parseTolerance('soon'), /--tolerance/);
    assert.deepEqual(parseMatches(['/a=linear', '/b'], 'previous'), { '/a': 'linear', '/b': 'previous' });
    assert.throws(() => parseMatches(['/a=cubic'], 'nearest'), /policy/);
  });

  test('one bag to CSV: the hand-computed table, the description beside it, --json per its schema', SLOW, async () => {
    const out = tmp.path('ep1.csv');
    const r = await runCli([
      'align',
      ep1,
      '--base',
      '/cam',
      '--match',
      '/state=previous',
      '--tolerance',
      '50ms',
      '--missing',
      'ffill',
      '-o',
      out,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { outputs: Array<{ rows: number }> };
    assert.ok(ajv.compile(JSON_SCHEMAS['align']!)(result));
    assert.equal(result.outputs[0]!.rows, 3);
    // t=0: nothing at or before 0 → no earlier row to fill from → null; t=100: 90 ms; t=200: 160 ms
    assert.equal(
      readFileSync(out, 'utf8'),
      [
        'time,/cam.seq,/state#time,/state.x',
        `${iso(0)},0,,`,
        `${iso(100_000)},1,${iso(90_000)},1`,
        `${iso(200_000)},2,${iso(160_000)},2`,
        '',
      ].join('\n'),
    );
    const description = JSON.parse(readFileSync(`${out}.json`, 'utf8'));
    assert.deepEqual(description.parameters.match, { '/state': 'previous' });
    assert.equal(description.urls['/state'].missing, 1);
  });

  test('several bags: one file per bag in the output directory; an existing output needs --force', SLOW, async () => {
    const dir = tmp.path('dataset');
    mkdirSync(dir);
    const args = ['align', ep1, ep2, '--base', '100hz', '--match', '/state=linear', '-o', dir, '-q'];
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    for (const name of ['ep1.parquet', 'ep2.parquet', 'ep1.parquet.json', 'ep2.parquet.json']) {
      assert.ok(existsSync(`${dir}/${name}`), name);
    }
    const description = JSON.parse(readFileSync(`${dir}/ep2.parquet.json`, 'utf8'));
    // ticks every 10 ms from 90 ms to 290 ms; linear has both neighbours for each
    assert.equal(description.rows, 21);
    assert.equal(description.urls['/state'].interpolated, 21 - 3);
    const again = await runCli(args);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
  });

  test('bad input: an unknown url and a bad policy are one-line errors', SLOW, async () => {
    const missing = await runCli(['align', ep1, '--base', '/nope', '-o', tmp.path('x.parquet')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /the base url \/nope is not in the bag/);
    const policy = await runCli(['align', ep1, '--base', '/cam', '--missing', 'zero', '-o', tmp.path('y.parquet')]);
    assert.equal(policy.code, 2);
    assert.match(policy.stderr, /--missing/);
    assert.equal(existsSync(tmp.path('x.parquet')), false);
  });
});
