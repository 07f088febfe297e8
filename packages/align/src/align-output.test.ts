import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, BagError, BagReader, BagWriter, SchemaType } from '@vlink/bag';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import {
  type AlignDescription,
  type AlignOptions,
  alignTable,
  alignToFile,
  descriptionPath,
  PARQUET_DESCRIPTION_KEY,
} from './index.js';
import { START_MS, writeJsonBag } from './testing/json-bag.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-align-out-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const bag = join(dir, 'episode.vcap');
const OPTIONS: AlignOptions = {
  base: { url: '/cam' },
  match: { '/state': 'nearest' },
  toleranceUs: 300,
};
const epoch = (us: number) => BigInt(START_MS) * 1000n + BigInt(us);

before(async () => {
  await writeJsonBag(bag, [
    { url: '/cam', log: 1000, value: { seq: 1, label: 'a,"b"' } },
    { url: '/cam', log: 2000, value: { seq: 2, label: 'plain' } },
    { url: '/state', log: 1100, value: { ok: true, q: [1, 2], pose: { y: 0.5 } } },
    // a field the first message did not have, and a value of the wrong type
    { url: '/state', log: 2200, value: { ok: 'yes', q: [3], pose: { y: 1.5 }, extra: 1 } },
    // an RPC request on the same url: not a sample
    { url: '/state', log: 1500, value: { call: 1 }, action: ActionType.ClientRequest },
  ]);
});

const read = async <T>(path: string, run: (reader: BagReader) => Promise<T>) => {
  const reader = await BagReader.create(path);
  try {
    return await run(reader);
  } finally {
    await reader.close();
  }
};

describe('align output files', () => {
  test('parquet reads back (hyparquet) with the described columns, types and values', async () => {
    const out = join(dir, 'episode.parquet');
    const description = await read(bag, (r) => alignToFile(r, OPTIONS, out));
    const bytes = readFileSync(out);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const metadata = parquetMetadata(buffer);
    const schema = metadata.schema.slice(1).map((e) => [e.name, e.type, e.converted_type ?? null]);
    assert.deepEqual(schema, [
      ['time', 'INT64', 'TIMESTAMP_MICROS'],
      ['/cam.seq', 'DOUBLE', null],
      ['/cam.label', 'BYTE_ARRAY', 'UTF8'],
      ['/state#time', 'INT64', 'TIMESTAMP_MICROS'],
      ['/state.ok', 'BOOLEAN', null],
      ['/state.q', 'BYTE_ARRAY', 'JSON'],
      ['/state.pose.y', 'DOUBLE', null],
    ]);
    assert.deepEqual(
      description.columns.map((c) => c.name),
      schema.map((s) => s[0]),
    );
    const footer = metadata.key_value_metadata?.find((kv) => kv.key === PARQUET_DESCRIPTION_KEY)?.value;
    assert.deepEqual(JSON.parse(footer!), description);
    assert.deepEqual(JSON.parse(readFileSync(descriptionPath(out), 'utf8')), description);
    const rows = await parquetReadObjects({ file: buffer, utf8: true });
    assert.deepEqual(
      rows.map((r) => (r.time as Date).getTime()),
      [START_MS + 1, START_MS + 2],
    );
    assert.deepEqual(
      rows.map((r) => [r['/cam.seq'], r['/cam.label'], r['/state.ok'], r['/state.q'], r['/state.pose.y']]),
      [
        // json columns hold the JSON text
        [1, 'a,"b"', true, '[1,2]', 0.5],
        [2, 'plain', null, '[3]', 1.5],
      ],
    );
    // hyparquet gives Date for TIMESTAMP(MICROS): ms resolution; the µs are checked in CSV below
    assert.deepEqual(
      rows.map((r) => (r['/state#time'] as Date).getTime()),
      [START_MS + 1, START_MS + 2],
    );
    assert.equal(description.urls['/state']!.skippedActions, 1);
    assert.equal(description.urls['/state']!.typeMismatches, 1);
    assert.deepEqual(description.urls['/state']!.unknownFields, { extra: 1 });
    assert.equal(description.recordingStart, new Date(START_MS).toISOString().replace('Z', '000Z'));
  });

  test('csv and ndjson hold the same rows, times in ISO 8601 with µs', async () => {
    const csv = join(dir, 'episode.csv');
    const ndjson = join(dir, 'episode.ndjson');
    await read(bag, (r) => alignToFile(r, OPTIONS, csv));
    await read(bag, (r) => alignToFile(r, { ...OPTIONS }, ndjson));
    const t = (us: bigint) => {
      const ms = Number(us / 1000n);
      return `${new Date(ms).toISOString().slice(0, -1)}${String(us % 1000n).padStart(3, '0')}Z`;
    };
    assert.equal(
      readFileSync(csv, 'utf8'),
      [
        'time,/cam.seq,/cam.label,/state#time,/state.ok,/state.q,/state.pose.y',
        `${t(epoch(1000))},1,"a,""b""",${t(epoch(1100))},true,"[1,2]",0.5`,
        `${t(epoch(2000))},2,plain,${t(epoch(2200))},,[3],1.5`,
        '',
      ].join('\n'),
    );
    assert.ok(t(epoch(1100)).endsWith('.001100Z'));
    const lines = readFileSync(ndjson, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(lines, [
      {
        time: t(epoch(1000)),
        '/cam.seq': 1,
        '/cam.label': 'a,"b"',
        '/state#time': t(epoch(1100)),
        '/state.ok': true,
        '/state.q': [1, 2],
        '/state.pose.y': 0.5,
      },
      {
        time: t(epoch(2000)),
        '/cam.seq': 2,
        '/cam.label': 'plain',
        '/state#time': t(epoch(2200)),
        '/state.ok': null,
        '/state.q': [3],
        '/state.pose.y': 1.5,
      },
    ]);
    const description = JSON.parse(readFileSync(descriptionPath(ndjson), 'utf8')) as AlignDescription;
    assert.equal(description.format, 'ndjson');
    assert.deepEqual(description.parameters, {
      base: { url: '/cam' },
      timeBase: 'log',
      match: { '/state': 'nearest' },
      toleranceUs: 300,
      missing: 'null',
    });
  });

  test('parquet row groups are written as they fill', async () => {
    const many = join(dir, 'many.vdb');
    const messages = [];
    for (let i = 0; i < 250; i++) messages.push({ url: '/cam', log: 1000 + i * 100, value: { seq: i } });
    await writeJsonBag(many, messages);
    const out = join(dir, 'many.parquet');
    await read(many, (r) => alignToFile(r, { base: { url: '/cam' }, match: {}, rowGroupSize: 100 }, out));
    const bytes = readFileSync(out);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    assert.deepEqual(
      parquetMetadata(buffer).row_groups.map((g) => Number(g.num_rows)),
      [100, 100, 50],
    );
    const rows = await parquetReadObjects({ file: buffer });
    assert.deepEqual(
      rows.map((r) => r['/cam.seq']),
      Array.from({ length: 250 }, (_, i) => i),
    );
  });
});

describe('align: bad input is a typed BagError', () => {
  const code = (c: string) => (e: unknown) => BagError.isInstance(e) && e.code === c;
  const cases: Array<[string, AlignOptions, string]> = [
    ['an unknown base url', { base: { url: '/nope' } }, 'NOT_FOUND'],
    ['an unknown matched url', { base: { url: '/cam' }, match: { '/nope': 'nearest' } }, 'NOT_FOUND'],
    ['an unknown policy', { base: { url: '/cam' }, match: { '/state': 'cubic' as never } }, 'INVALID_ARGUMENT'],
    ['a negative tolerance', { base: { url: '/cam' }, toleranceUs: -1 }, 'INVALID_ARGUMENT'],
    ['a zero rate', { base: { rateHz: 0 } }, 'INVALID_ARGUMENT'],
    ['both a url and a rate', { base: { url: '/cam', rateHz: 10 } as never }, 'INVALID_ARGUMENT'],
    ['the base url matched too', { base: { url: '/cam' }, match: { '/cam': 'nearest' } }, 'INVALID_ARGUMENT'],
    ['a time base that is neither', { base: { url: '/cam' }, timeBase: 'wall' as never }, 'INVALID_ARGUMENT'],
    ['an unknown missing policy', { base: { url: '/cam' }, missing: 'zero' as never }, 'INVALID_ARGUMENT'],
    ['start and end on a url base', { base: { url: '/cam' }, startUs: 0 }, 'INVALID_ARGUMENT'],
  ];
  for (const [what, options, expected] of cases) {
    test(what, async () => {
      await read(bag, (r) => assert.rejects(alignTable(r, options), code(expected)));
    });
  }

  test('a url whose payloads do not decode is refused, naming it; a failed file leaves nothing behind', async () => {
    const raw = join(dir, 'raw.vcap');
    const writer = await BagWriter.create(raw, { maxQueueTimeMs: 0 });
    await writer.write({
      timestamp: 10,
      url: '/blob',
      data: new Uint8Array([0, 1, 2, 255]),
      serType: 'bytes',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
    await writer.close();
    const out = join(dir, 'raw-out', 'x.parquet');
    await read(raw, (r) =>
      assert.rejects(
        alignToFile(r, { base: { rateHz: 10 } }, out),
        (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR',
      ),
    );
    const out2 = join(dir, 'raw.parquet');
    await read(raw, (r) =>
      assert.rejects(
        alignToFile(r, { base: { rateHz: 10 } }, out2),
        (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED' && e.message.includes('/blob'),
      ),
    );
    assert.equal(existsSync(out2), false);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.partial-')),
      [],
    );
  });

  test('an output name without a known extension needs a format', async () => {
    await read(bag, (r) => assert.rejects(alignToFile(r, OPTIONS, join(dir, 'out.bin')), code('INVALID_ARGUMENT')));
  });
});
