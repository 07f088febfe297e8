import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { ActionType } from '../model/action-type.js';
import { createFrame, type Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter } from './bag-writer.js';

// Schemas in worker mode: pushSchema and the schema callback run on the producer's thread, the worker writes what they
// resolved (see schema-forwarder.ts); split from worker-writer.test.ts, which covers frames, limits and failures.

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-worker-schemas-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const bag = (ext = '.memjson', infix = '') => join(dir, `w${n++}${infix}${ext}`);

async function readAll(path: string): Promise<Frame[]> {
  const reader = await BagReader.create(path);
  const out: Frame[] = [];
  for await (const f of reader.frames()) out.push({ ...f, data: f.data.slice() });
  reader.close();
  return out;
}

describe('BagWriter in a worker: schemas', () => {
  test('schemas: pushSchema and the producer-side callback reach the file written by the worker', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    const asked: string[] = [];
    writer.registerSchemaCallback((name, schemaType) => {
      asked.push(name);
      return name === 'pb.Pose' ? { name, encoding: 'protobuf', schemaType, data: new Uint8Array([5, 6]) } : undefined;
    });
    writer.pushSchema({
      name: 'pb.Pushed',
      encoding: 'protobuf',
      schemaType: SchemaType.Protobuf,
      data: new Uint8Array([1]),
    });
    for (let i = 0; i < 3; i++)
      writer.push(
        createFrame({
          timestamp: i,
          url: 'pose',
          data: new Uint8Array(2),
          serType: 'pb.Pose',
          schemaType: SchemaType.Protobuf,
        }),
      );
    writer.push(
      createFrame({
        timestamp: 9,
        url: 'rpc',
        data: new Uint8Array(1),
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ClientRequest,
      }),
    );
    await writer.close();
    assert.deepEqual(
      asked.filter((x) => x === 'pb.Pose'),
      ['pb.Pose'],
      'asked once per (ser, family)',
    );
    assert.ok(asked.includes('pb.Req') && asked.includes('pb.Resp'), 'RPC halves are resolved too');
    const reader = await BagReader.create(path);
    const names = reader
      .getSchemas()
      .map((s) => s.name)
      .sort();
    reader.close();
    assert.deepEqual(names, ['pb.Pose', 'pb.Pushed']);
  });

  test('schemas: a url whose schema was unknown asks again once a new callback is registered', async () => {
    const writer = await BagWriter.create(bag());
    const asked: string[] = [];
    writer.registerSchemaCallback((name) => void asked.push(`first:${name}`));
    const pose = (timestamp: number) =>
      createFrame({
        timestamp,
        url: 'pose',
        data: new Uint8Array(2),
        serType: 'pb.Pose',
        schemaType: SchemaType.Protobuf,
      });
    writer.push(pose(1));
    writer.push(pose(2));
    writer.registerSchemaCallback((name, schemaType) => {
      asked.push(`second:${name}`);
      return { name, encoding: 'protobuf', schemaType, data: new Uint8Array([7]) };
    });
    writer.push(pose(3));
    writer.push(pose(4));
    await writer.close();
    assert.deepEqual(asked, ['first:pb.Pose', 'second:pb.Pose'], 'each callback asked once for the pair');
  });

  test('schemas: a url that changes its ser keeps its name, and each ser is resolved once', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    const asked: string[] = [];
    writer.registerSchemaCallback((name, schemaType) => {
      asked.push(name);
      return { name, encoding: 'protobuf', schemaType, data: new Uint8Array([1]) };
    });
    const frame = (timestamp: number, url: string, serType: string) =>
      createFrame({ timestamp, url, data: new Uint8Array([timestamp]), serType, schemaType: SchemaType.Protobuf });
    writer.push(frame(1, 'x', 'pb.A'));
    writer.push(frame(2, 'x', 'pb.B')); // the memory backend, like VLink, refuses a second ser on a url
    writer.push(frame(3, 'x', 'pb.A'));
    writer.push(frame(4, 'y', 'pb.B'));
    await writer.close();
    assert.deepEqual(asked, ['pb.A', 'pb.B']);
    assert.equal(writer.stats().dropped.schemaConflict, 1);
    const frames = await readAll(path);
    assert.deepEqual(
      frames.map((f) => [f.timestamp, f.url, f.serType]),
      [
        [1, 'x', 'pb.A'],
        [3, 'x', 'pb.A'],
        [4, 'y', 'pb.B'],
      ],
    );
  });
});
