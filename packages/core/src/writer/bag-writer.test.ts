import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { createFrame, type SchemaData } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { patternBytes } from '../testing/sample-frames.js';
import { BagWriter } from './bag-writer.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-writer-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const bag = () => join(dir, `w${n++}.memjson`);

async function readTimestamps(path: string): Promise<number[]> {
  const reader = await BagReader.create(path);
  const out: number[] = [];
  for await (const f of reader.frames()) out.push(f.timestamp);
  reader.close();
  return out;
}

describe('BagWriter', () => {
  test('unknown extension is UNSUPPORTED_FORMAT listing what is supported', async () => {
    await assert.rejects(BagWriter.create(join(dir, 'x.bag')), (e: unknown) => {
      assert.ok(BagError.isInstance(e));
      assert.equal(e.code, 'UNSUPPORTED_FORMAT');
      assert.match(e.message, /\.memjson/);
      return true;
    });
  });

  test('push returns the timestamp; negative asks for the writer clock; empty url is refused', async () => {
    const path = bag();
    const writer = await BagWriter.create(path, { syncMode: true });
    assert.equal(writer.push(createFrame({ timestamp: 0, url: 'a', data: new Uint8Array(1) })), 0);
    assert.equal(writer.push(createFrame({ timestamp: 1234, url: 'a', data: new Uint8Array(1) })), 1234);
    const auto = writer.push(createFrame({ url: 'a', data: new Uint8Array(1) }));
    assert.ok(auto >= 0);
    assert.ok(writer.push(createFrame({ url: '', data: new Uint8Array(1) })) < 0);
    assert.equal(writer.stats().dropped.emptyUrl, 1);
    await writer.close();
    assert.deepEqual(
      await readTimestamps(path),
      [0, auto, 1234].sort((a, b) => a - b),
    );
  });

  test('async mode keeps push order and writes everything on close', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    writer.asyncRun();
    for (let i = 0; i < 2000; i++)
      writer.push(createFrame({ timestamp: i, url: `u${i % 3}`, data: patternBytes(8, i) }));
    await writer.close();
    const stats = writer.stats();
    assert.equal(stats.writtenFrames, 2000);
    assert.equal(stats.queuedFrames, 0);
    assert.deepEqual(
      await readTimestamps(path),
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });

  test('frames pushed before asyncRun are written', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    writer.push(createFrame({ timestamp: 5, url: 'a', data: new Uint8Array(2) }));
    await writer.close();
    assert.deepEqual(await readTimestamps(path), [5]);
  });

  test('queue depth and memory limits reject pushes with counted reasons', async () => {
    // VLink's plain frame limit: without `maxQueueTimeMs: 0` the queue also takes what the worker writes in 250 ms at
    // the rate an earlier recording of this process measured.
    const writer = await BagWriter.create(bag(), { maxTaskDepth: 10, maxMemorySize: 100, maxQueueTimeMs: 0 });
    let accepted = 0;
    for (let i = 0; i < 20; i++)
      if (writer.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(4) })) >= 0) accepted++;
    assert.equal(accepted, 10);
    assert.equal(writer.stats().dropped.queueDepth, 10);
    await writer.close();
    const w2 = await BagWriter.create(bag(), { maxMemorySize: 100 });
    assert.ok(w2.push(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(60) })) >= 0);
    assert.equal(w2.push(createFrame({ timestamp: 2, url: 'a', data: new Uint8Array(60) })), -1);
    assert.equal(w2.stats().dropped.queueMemory, 1);
    await w2.close();
  });

  test('durable push resolves after commit; push after quit is refused', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    const ts = await writer.pushDurable(createFrame({ timestamp: 77, url: 'a', data: new Uint8Array(3) }));
    assert.equal(ts, 77);
    assert.equal(writer.stats().commits, 1);
    assert.deepEqual(await readTimestamps(path), [77], 'visible on disk before close');
    writer.quit();
    assert.equal(writer.push(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(1) })), -1);
    await assert.rejects(writer.pushDurable(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(1) })), {
      code: 'CLOSED',
    });
    await writer.waitForQuit();
    assert.equal(writer.stats().dropped.closed, 2);
  });

  test('a rejected frame is reported, counted, and does not fail the writer', async () => {
    const path = bag();
    const errors: BagError[] = [];
    const writer = await BagWriter.create(path, { syncMode: true });
    writer.registerErrorCallback((e) => errors.push(e));
    writer.push(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(1), serType: 'x' }));
    assert.equal(writer.push(createFrame({ timestamp: 2, url: 'a', data: new Uint8Array(1), serType: 'y' })), -1);
    assert.equal(writer.fail(), false);
    assert.equal(errors[0]?.code, 'SCHEMA_CONFLICT');
    assert.equal(writer.stats().dropped.schemaConflict, 1);
    await writer.close();
  });

  test('pushSchema rejects conflicting content; schema callback answers unknown schemas', async () => {
    const writer = await BagWriter.create(bag(), { syncMode: true });
    const schema = {
      name: 'pb.A',
      encoding: 'protobuf',
      schemaType: SchemaType.Protobuf,
      data: new Uint8Array([1, 2]),
    };
    assert.equal(writer.pushSchema(schema), true);
    assert.equal(writer.pushSchema(schema), true);
    assert.equal(writer.pushSchema({ ...schema, data: new Uint8Array([3]) }), false);
    const asked: string[] = [];
    writer.registerSchemaCallback((name) => {
      asked.push(name);
      return { name, encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: new Uint8Array([9]) };
    });
    assert.deepEqual(writer.context.resolveSchema('pb.B', SchemaType.Protobuf)?.data, new Uint8Array([9]));
    assert.deepEqual(asked, ['pb.B']);
    await writer.close();
  });

  // Before: a string `data` was stored as text, a schema without a number schemaType under a key no frame finds, and
  // `null` reported as a SCHEMA_CONFLICT about a TypeError.
  test('pushSchema refuses a schema of the wrong shape (INVALID_ARGUMENT, reported) and keeps recording', async () => {
    const path = bag();
    const writer = await BagWriter.create(path, { syncMode: true });
    const errors: BagError[] = [];
    writer.registerErrorCallback((error) => errors.push(error));
    const good = { name: 'pb.A', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: new Uint8Array([1]) };
    const wrong: Array<[unknown, string]> = [
      [null, 'a schema must be an object'],
      [{ ...good, name: 7 }, 'schema name must not be empty'],
      [{ ...good, data: 'syntax = "proto3";' }, 'schema "pb.A": data must be a Uint8Array'],
      [{ ...good, schemaType: undefined }, 'schema "pb.A": schemaType must be a number'],
      [{ ...good, encoding: 5 }, 'schema "pb.A": encoding must be a string'],
    ];
    for (const [schema] of wrong) assert.equal(writer.pushSchema(schema as SchemaData), false);
    assert.deepEqual(
      errors.map((e) => [e.code, e.message.replace(/^pushSchema failed: /, '')]),
      wrong.map(([, message]) => ['INVALID_ARGUMENT', message]),
    );
    assert.equal(writer.pushSchema(good), true);
    writer.push(createFrame({ timestamp: 3, url: 'a', data: new Uint8Array(1) }));
    await writer.close();
    assert.equal(writer.stats().writtenFrames, 1);
  });

  // Before: a string, NaN or null loss was stored as a loss of 0 in a .vcap ("nothing lost") and as unknown in a .vdb.
  test('setUrlLoss refuses a loss that is not a number, or an empty url (INVALID_ARGUMENT)', async () => {
    const writer = await BagWriter.create(bag(), { syncMode: true });
    for (const [url, loss, message] of [
      ['a', '0.5', /^setUrlLoss: loss must be a ratio \(a number\), got 0\.5/],
      ['a', Number.NaN, /got NaN/],
      ['a', null, /got null/],
      ['', 0.5, /^setUrlLoss: url must be a non-empty string$/],
    ] as const)
      assert.throws(() => writer.setUrlLoss(url, loss as never), { code: 'INVALID_ARGUMENT', message });
    writer.setUrlLoss('a', 0.25);
    writer.setUrlLoss('a', 7); // VLink's: stored as unknown
    await writer.close();
  });

  test('await using closes the writer', async () => {
    const path = bag();
    {
      await using writer = await BagWriter.create(path, { syncMode: true });
      writer.push(createFrame({ timestamp: 3, url: 'a', data: new Uint8Array(1) }));
    }
    const reader = await BagReader.create(path);
    assert.equal(reader.getInfo().hasCompleted, true);
    reader.close();
  });
});
