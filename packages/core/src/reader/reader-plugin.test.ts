import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { recordEvents, TempBags } from '../playback/test-bags.test.helper.js';
import { BagPluginInterface } from '../plugins/bag-plugin.js';
import { BagWriter } from '../writer/bag-writer.js';
import { BagReader } from './bag-reader.js';

const bags = new TempBags();
after(() => bags.remove());

/** Renames `cam/*` onto one url, drops `secret`, tags what it reads and holds `imu` frames until flush. */
class TestPlugin extends BagPluginInterface {
  reads: string[] = [];
  resets = 0;
  flushes = 0;
  held: Frame[] = [];
  override convertUrlMeta(url: string): string | null {
    if (url === 'secret') return null;
    return url.startsWith('cam/') ? 'cam' : url;
  }
  override onRead(frame: Frame): void {
    this.reads.push(frame.url);
    if (frame.url === 'imu') this.held.push({ ...frame, data: frame.data.slice() });
    else this.doCallback(frame);
  }
  override onReset(): void {
    this.resets++;
    this.held = [];
  }
  override flush(): void {
    this.flushes++;
    for (const f of this.held) this.doCallback({ ...f, url: 'imu/late' });
    this.held = [];
  }
}

async function makeBag(): Promise<string> {
  const path = bags.path();
  const writer = await BagWriter.create(path, { syncMode: true });
  const push = (timestamp: number, url: string, serType: string, schemaType: SchemaType) =>
    writer.push({
      timestamp,
      url,
      serType,
      schemaType,
      actionType: ActionType.Publish,
      data: new Uint8Array([timestamp / 1000]),
    });
  push(1000, 'cam/front', 'pb.Image', SchemaType.Protobuf);
  push(2000, 'secret', 'raw', SchemaType.Raw);
  push(3000, 'imu', 'json', SchemaType.Raw);
  push(4000, 'cam/rear', 'raw', SchemaType.Raw);
  push(5000, 'gps', 'raw', SchemaType.Raw);
  await writer.close();
  return path;
}

describe('BagReader with a read plugin', () => {
  test('cursors and frames() see remapped urls, never dropped ones, and never run onRead', async () => {
    const reader = await BagReader.create(await makeBag());
    const plugin = new TestPlugin();
    reader.bindPluginInterface(plugin);
    const all: string[] = [];
    for await (const f of reader.frames()) all.push(`${f.url}:${f.serType}:${f.schemaType}`);
    // serType/schemaType come from the url maps keyed by the playback url: `cam` is described by `cam/front`.
    assert.deepEqual(all, ['cam:pb.Image:3', 'imu:json:1', 'cam:pb.Image:3', 'gps:raw:1']);
    reader.openCursor({ filterUrls: ['cam'], beginTime: 2 });
    const cams: number[] = [];
    let f: Frame | undefined;
    while ((f = reader.next())) cams.push(f.timestamp);
    assert.deepEqual(cams, [4000]);
    reader.openCursor({ filterUrls: ['cam/front', 'secret'] });
    assert.equal(reader.next(), undefined, 'stored and dropped names do not match playback urls');
    assert.equal(reader.eof(), true);
    assert.deepEqual(plugin.reads, []);
    assert.equal(plugin.resets, 0);
    reader.close();
  });

  test('playback runs onReset per session, onRead per frame, flush after each natural pass', async () => {
    const reader = await BagReader.create(await makeBag());
    const plugin = new TestPlugin();
    reader.bindPluginInterface(plugin);
    const { events } = recordEvents(reader);
    await reader.play({ forceDelay: 0, times: 2 }).finished;
    const pass = ['ready', 'status:2', 'cam@1', 'cam@4', 'gps@5', 'status:0', 'imu/late@3'];
    assert.deepEqual(events, [...pass, ...pass, 'finish:false']);
    assert.equal(plugin.resets, 1);
    assert.equal(plugin.flushes, 2);
    assert.deepEqual(plugin.reads, ['cam', 'imu', 'cam', 'gps', 'cam', 'imu', 'cam', 'gps']);
    events.length = 0;
    await reader.play({ forceDelay: 0, filterUrls: ['imu'] }).finished;
    assert.deepEqual(events, ['ready', 'status:2', 'status:0', 'imu/late@3', 'finish:false']);
    assert.equal(plugin.resets, 2);
    reader.bindPluginInterface(undefined);
    const urls: string[] = [];
    for await (const fr of reader.frames()) urls.push(fr.url);
    assert.deepEqual(urls, ['cam/front', 'secret', 'imu', 'cam/rear', 'gps']);
    reader.close();
  });

  test('a stopped pass is not flushed', async () => {
    const reader = await BagReader.create(await makeBag());
    const plugin = new TestPlugin();
    reader.bindPluginInterface(plugin);
    reader.registerOutputCallback((frame) => {
      if (frame.url === 'gps') void reader.stop();
    });
    assert.equal(await reader.play({ forceDelay: 0 }).finished, true);
    assert.equal(plugin.flushes, 0);
    reader.close();
  });

  test('a stop from the status callback at the end of a pass (Stopped) is not flushed either', async () => {
    // Format reference §7.4 step 6: after a natural end the status goes Stopped, then flush() runs unless stopped.
    const reader = await BagReader.create(await makeBag());
    const plugin = new TestPlugin();
    reader.bindPluginInterface(plugin);
    const { events } = recordEvents(reader);
    reader.registerStatusCallback((status) => {
      events.push(`status:${status}`);
      if (status === 0) void reader.stop();
    });
    await reader.play({ forceDelay: 0 }).finished;
    assert.equal(plugin.flushes, 0);
    assert.deepEqual(events.slice(0, 6), ['ready', 'status:2', 'cam@1', 'cam@4', 'gps@5', 'status:0']);
    assert.ok(!events.includes('imu/late@3'), events.join(' '));
    reader.close();
  });
});
