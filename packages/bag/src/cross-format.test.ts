import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { patternBytes, SAMPLE_PROTO_SCHEMA, sampleFrames } from '@vlink/bag-core/testing';
import {
  ActionType,
  BagReader,
  BagWriter,
  SchemaType,
  schemaTypeLabel,
  type BagWriterOptions,
  type Frame,
  type SchemaData,
} from './index.js';

// Issue 3 part 4: a bag copied between formats with BagReader + BagWriter keeps every frame (time, url, action, ser,
// family, payload bytes) and every schema, through the single-file and the split formats alike.

const dir = mkdtempSync(join(tmpdir(), 'vlink-xfmt-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SCHEMAS: SchemaData[] = [
  SAMPLE_PROTO_SCHEMA,
  { name: 'pb.Req', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: patternBytes(20, 6) },
  { name: 'pb.Resp', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: patternBytes(24, 7) },
  { name: 'fb.Pose', encoding: 'flatbuffers', schemaType: SchemaType.Flatbuffers, data: patternBytes(40, 5) },
];

/** The shared sample plus a flatbuffers url, so both schema families that every format embeds are covered. */
function input(): Frame[] {
  return sampleFrames(180).flatMap((f, i) =>
    i % 9 === 4
      ? [
          f,
          {
            timestamp: f.timestamp + 1,
            url: 'dds://pose',
            data: patternBytes(96, i),
            serType: 'fb.Pose',
            schemaType: SchemaType.Flatbuffers,
            actionType: ActionType.Publish,
          },
        ]
      : [f],
  );
}

const START = 1_773_712_800_123;

async function copy(from: string, to: string, options: BagWriterOptions): Promise<void> {
  const reader = await BagReader.create(from);
  const info = reader.getInfo();
  const writer = await BagWriter.create(to, { startTimestamp: info.startTimestamp, tagName: info.tagName, ...options });
  try {
    for (const schema of reader.getSchemas())
      assert.equal(writer.pushSchema(schema), true, `pushSchema ${schema.name}`);
    for await (const frame of reader.frames()) assert.notEqual(writer.push(frame), -1);
  } finally {
    await writer.close();
    reader.close();
  }
  assert.equal(writer.fail(), false);
  assert.deepEqual(writer.stats().dropped, Object.fromEntries(Object.keys(writer.stats().dropped).map((k) => [k, 0])));
}

async function assertSame(path: string, want: Frame[]): Promise<void> {
  const reader = await BagReader.create(path);
  try {
    const got: Frame[] = [];
    for await (const f of reader.frames()) got.push({ ...f, data: f.data.slice() });
    assert.equal(got.length, want.length, `${path}: frame count`);
    for (let i = 0; i < want.length; i++) {
      const g = got[i]!;
      const w = want[i]!;
      assert.deepEqual(
        [g.timestamp, g.url, g.actionType, g.serType, g.schemaType],
        [w.timestamp, w.url, w.actionType, w.serType, w.schemaType],
        `${path}: frame #${i}`,
      );
      assert.deepEqual(g.data, w.data, `${path}: payload #${i}`);
    }
    // .vcap stores schema encodings under MCAP's well-known names (`flatbuffers` → `flatbuffer`), and copies keep them.
    const wellKnown = (encoding: string) => (encoding === 'flatbuffers' ? 'flatbuffer' : encoding);
    const schemaKey = (s: SchemaData) =>
      `${s.name} ${wellKnown(s.encoding)} ${schemaTypeLabel(s.schemaType)} ${Buffer.from(s.data).toString('hex')}`;
    assert.deepEqual(reader.getSchemas().map(schemaKey).sort(), SCHEMAS.map(schemaKey).sort(), `${path}: schemas`);
    const info = reader.getInfo();
    assert.equal(info.startTimestamp, START);
    assert.equal(info.messageCount, want.length);
    assert.equal(info.hasCompleted, true);
    // Per url: kind, ser and the totals (MCAP formats list a url once per action; add those up).
    const perUrl = new Map<string, [string, string, number, number]>();
    for (const u of info.urls) {
      const e = perUrl.get(u.url) ?? [u.type, u.ser, 0, 0];
      e[2] += u.count;
      e[3] += u.size;
      perUrl.set(u.url, e);
    }
    const expected = new Map<string, [string, string, number, number]>();
    for (const f of want) {
      const e = expected.get(f.url) ?? [
        f.actionType <= ActionType.ServerResponse ? 'Method' : f.actionType <= ActionType.Subscribe ? 'Event' : 'Field',
        f.serType,
        0,
        0,
      ];
      e[2]++;
      e[3] += f.data.length;
      expected.set(f.url, e);
    }
    assert.deepEqual(perUrl, expected, `${path}: urls`);
  } finally {
    reader.close();
  }
}

describe('cross-format copy', () => {
  test('.vdb → .vcap → .vdb → .vdbx → .vcapx → .vdb keeps frames, urls, actions, sers and schemas', async () => {
    const frames = input();
    const origin = join(dir, 'origin.vdb');
    const writer = await BagWriter.create(origin, { syncMode: true, compress: 'lzav', startTimestamp: START });
    for (const schema of SCHEMAS) writer.pushSchema(schema);
    for (const frame of frames) writer.push(frame);
    await writer.close();
    await assertSame(origin, frames);

    const chain: Array<[string, BagWriterOptions]> = [
      ['a.vcap', { syncMode: true, compress: 'zstd' }],
      ['b.vdb', { syncMode: true }],
      ['c.vdbx', { splitBySize: 96 * 1024, compress: 'lzav' }], // worker mode
      ['d.vcapx', { splitBySize: 96 * 1024, compress: 'zstd' }], // worker mode
      ['e.vdb', { syncMode: true, compress: 'lzav' }],
    ];
    let from = origin;
    for (const [name, options] of chain) {
      const to = join(dir, name);
      await copy(from, to, options);
      await assertSame(to, frames);
      from = to;
    }
    for (const split of ['c.vdbx', 'd.vcapx']) {
      const reader = await BagReader.create(join(dir, split));
      assert.ok(reader.getInfo().splitCount >= 3, `${split} split into ${reader.getInfo().splitCount}`);
      reader.close();
    }
  });

  test('.vcapx → .vdbx directly', async () => {
    const frames = input();
    const origin = join(dir, 'origin.vcapx');
    const writer = await BagWriter.create(origin, { syncMode: true, startTimestamp: START, splitBySize: 200 * 1024 });
    for (const schema of SCHEMAS) writer.pushSchema(schema);
    for (const frame of frames) writer.push(frame);
    await writer.close();
    await assertSame(origin, frames);
    await copy(origin, join(dir, 'copy.vdbx'), { syncMode: true, splitBySize: 50 * 1024 });
    await assertSame(join(dir, 'copy.vdbx'), frames);
  });
});
