import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { TempBags } from '../playback/test-bags.test.helper.js';
import { BagReader } from '../reader/bag-reader.js';
import { BagWriter } from '../writer/bag-writer.js';
import { BagProcessor } from './bag-processor.js';
import { BagProcessorPlugin } from './processor-plugin.js';

const bags = new TempBags();
after(() => bags.remove());

/** A frame whose payload carries its data-plane time (µs, little-endian float64), as a sensor header would. */
function stamped(timestamp: number, url: string, dataUs: number): Frame {
  const data = new Uint8Array(8);
  new DataView(data.buffer).setFloat64(0, dataUs, true);
  return { timestamp, url, data, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish };
}
const dataTime = (frame: Frame) => new DataView(frame.data.buffer, frame.data.byteOffset, 8).getFloat64(0, true);

async function readAll(path: string): Promise<string[]> {
  const reader = await BagReader.create(path);
  const out: string[] = [];
  for await (const f of reader.frames()) out.push(`${f.url}@${f.timestamp}`);
  reader.close();
  return out;
}

describe('BagProcessorPlugin', () => {
  test('bound to a writer: frames are stored in data time', async () => {
    const path = bags.path();
    const writer = await BagWriter.create(path, { syncMode: true });
    writer.bindPluginInterface(new BagProcessorPlugin(dataTime));
    // Arrival (recording) order differs from data order; the lidar stamps lag by 30 ms.
    writer.push(stamped(1_000, 'cam', 100_000));
    writer.push(stamped(2_000, 'lidar', 70_000));
    writer.push(stamped(3_000, 'cam', 133_000));
    writer.push(stamped(4_000, 'lidar', 103_000));
    await writer.close(); // the writer flushes its plugin at close
    assert.deepEqual(await readAll(path), ['lidar@2000', 'cam@32000', 'lidar@35000', 'cam@65000']);
  });

  test('bound to a reader: playback emits in data time; each pass is flushed, each session reset', async () => {
    const path = bags.path();
    const writer = await BagWriter.create(path, { syncMode: true });
    writer.push(stamped(1_000, 'cam', 100_000));
    writer.push(stamped(2_000, 'lidar', 70_000));
    writer.push(stamped(3_000, 'cam', 133_000));
    await writer.close();
    const reader = await BagReader.create(path);
    reader.bindPluginInterface(new BagProcessorPlugin(dataTime));
    const got: string[] = [];
    for await (const f of reader.play({ forceDelay: 0, times: 2 })) got.push(`${f.url}@${f.timestamp}`);
    assert.deepEqual(got, ['lidar@2000', 'cam@32000', 'cam@65000', 'lidar@2000', 'cam@32000', 'cam@65000']);
    reader.close();
  });

  test('merging three recordings into one bag in data-plane time', async () => {
    // Three files recorded 200 ms apart, 10 frames each at 50 ms; their times overlap.
    const base = 1_700_000_000_000;
    const inputs = await Promise.all(
      [0, 1, 2].map((i) =>
        bags.write(
          Array.from({ length: 10 }, (_, k) => [10_000 + k * 50_000, `cam${i}`] as const),
          base + i * 200,
        ),
      ),
    );
    const readers = await Promise.all(inputs.map((p) => BagReader.create(p)));
    const out = bags.path('merged');
    const writer = await BagWriter.create(out, { syncMode: true, startTimestamp: base });
    const processor = new BagProcessor();
    processor.registerOutputCallback((f) => writer.push(f));
    // Data-plane time: absolute µs since the epoch, from each file's recording start.
    const starts = readers.map((r) => r.getInfo().startTimestamp * 1000);
    for (let more = true; more; ) {
      more = false;
      for (const [i, reader] of readers.entries()) {
        const f = reader.next();
        if (!f) continue;
        more = true;
        if (!processor.push(starts[i]! + f.timestamp, f)) await processor.waitForRoom();
      }
      await processor.idle(); // let the worker release what the 500 ms window allows, as a live source would
    }
    processor.close();
    await writer.close();
    for (const r of readers) r.close();

    const merged = await readAll(out);
    assert.equal(merged.length, 30);
    // Every frame lands at its time since the earliest start; equal instants keep their push order (cam1's first
    // frame was pushed in round 0, cam0's fifth in round 4) and are set 1 µs apart.
    const want = [0, 1, 2]
      .flatMap((i) =>
        Array.from({ length: 10 }, (_, k) => ({ url: `cam${i}`, at: i * 200_000 + 10_000 + k * 50_000, i, k })),
      )
      .sort((a, b) => a.at - b.at || a.k - b.k);
    let last = -1;
    const expected = want.map(({ url, at }) => `${url}@${(last = at <= last ? last + 1 : at)}`);
    assert.deepEqual(merged, expected);
    assert.deepEqual(merged.slice(0, 6), [
      'cam0@10000',
      'cam0@60000',
      'cam0@110000',
      'cam0@160000',
      'cam1@210000',
      'cam0@210001',
    ]);
    assert.equal(merged.at(-1), 'cam2@860000');
  });
});
