import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import type { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter } from './bag-writer.js';
import { tapSource } from './tap-source.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-tap-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const text = new TextDecoder();

async function readAll(path: string): Promise<Frame[]> {
  const reader = await BagReader.create(path);
  const out: Frame[] = [];
  for await (const f of reader.frames()) out.push({ ...f, data: f.data.slice() });
  reader.close();
  return out;
}

describe('tapSource', () => {
  test('an EventEmitter: every message is recorded until disposed; url may come from the message', async () => {
    const path = join(dir, `t${n++}.memjson`);
    const writer = await BagWriter.create(path);
    const emitter = new EventEmitter();
    const stop = tapSource<{ topic: string; body: string }>(writer, emitter, {
      url: (m) => `dds://${m.topic}`,
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Subscribe,
      toBytes: (m) => new TextEncoder().encode(m.body),
    });
    emitter.emit('message', { topic: 'a', body: 'one' });
    emitter.emit('message', { topic: 'b', body: 'two' });
    stop();
    emitter.emit('message', { topic: 'a', body: 'late' });
    assert.equal(emitter.listenerCount('message'), 0);
    await writer.close();
    const frames = await readAll(path);
    assert.deepEqual(
      frames.map((f) => [f.url, text.decode(f.data), f.serType, f.schemaType, f.actionType]),
      [
        ['dds://a', 'one', 'json', SchemaType.Raw, ActionType.Subscribe],
        ['dds://b', 'two', 'json', SchemaType.Raw, ActionType.Subscribe],
      ],
    );
  });

  test('an EventTarget: MessageEvent data and CustomEvent detail, default conversions', async () => {
    const path = join(dir, `t${n++}.memjson`);
    const writer = await BagWriter.create(path);
    const target = new EventTarget();
    const stop = tapSource(writer, target, { url: 'ws://feed', event: 'frame' });
    target.dispatchEvent(new MessageEvent('frame', { data: new Uint8Array([1, 2]) }));
    target.dispatchEvent(new MessageEvent('frame', { data: 'héllo' }));
    target.dispatchEvent(new CustomEvent('frame', { detail: { x: 1 } }));
    target.dispatchEvent(new MessageEvent('other', { data: 'ignored' }));
    stop[Symbol.dispose]();
    target.dispatchEvent(new MessageEvent('frame', { data: 'after dispose' }));
    await writer.close();
    const frames = await readAll(path);
    assert.deepEqual(
      frames.map((f) => f.data),
      [new Uint8Array([1, 2]), new TextEncoder().encode('héllo'), new TextEncoder().encode('{"x":1}')],
    );
  });

  test('an async iterable: recorded until it ends; a disposer stops it early; conversion errors are reported', async () => {
    const path = join(dir, `t${n++}.memjson`);
    const writer = await BagWriter.create(path);
    const errors: BagError[] = [];
    writer.registerErrorCallback((e) => errors.push(e));
    async function* finite() {
      for (let i = 0; i < 5; i++) yield i === 2 ? Symbol('not bytes') : new Uint8Array([i]);
    }
    const tap = tapSource(writer, finite(), { url: 'iter/finite', timestamp: () => 7 });
    await tap.done;

    let produced = 0;
    async function* endless() {
      for (;;) {
        produced++;
        yield new Uint8Array([produced & 0xff]);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
    const stop = tapSource(writer, endless(), { url: 'iter/endless' });
    while (produced < 3) await new Promise((resolve) => setTimeout(resolve, 2));
    stop();
    await stop.done;
    const stoppedAt = produced;
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(produced, stoppedAt, 'the generator is not pulled after dispose');
    await writer.close();

    const frames = await readAll(path);
    assert.deepEqual(
      frames.filter((f) => f.url === 'iter/finite').map((f) => [f.timestamp, f.data[0]]),
      [
        [7, 0],
        [7, 1],
        [7, 3],
        [7, 4],
      ],
    );
    assert.ok(frames.filter((f) => f.url === 'iter/endless').length >= 3);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.code, 'INVALID_ARGUMENT');
  });

  test('anything else is refused', async () => {
    const writer = await BagWriter.create(join(dir, `t${n++}.memjson`), { syncMode: true });
    assert.throws(() => tapSource(writer, {} as EventTarget, { url: 'x' }), { code: 'INVALID_ARGUMENT' });
    await writer.close();
  });
});
