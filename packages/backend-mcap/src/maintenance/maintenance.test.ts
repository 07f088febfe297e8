import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, resolveWriterConfig } from '@vlink/bag-core';
import type { Frame, WriterConfig } from '@vlink/bag-core';
import { mcapBackend } from '../backend.js';
import { loadCodecs } from '../codecs.js';
import { FileWritable } from '../io/file-writable.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { MemoryWritable } from '../io/memory-writable.js';
import { FOOTER_RECORD, MAGIC } from '../mcap/constants.js';
import { crc32 } from '../mcap/crc32.js';
import { readHeader, readSummary } from '../mcap/summary.js';
import { VcapFileWriter } from '../vcap/vcap-file-writer.js';
import type { VcapReader } from '../vcap/vcap-reader.js';
import {
  mcapIndexed,
  mcapStream,
  mixedFrames,
  openBytes,
  readFrames,
  recordToBytes,
  sidecarOf,
  testContext,
} from '../vcap/vcap.test.helper.js';
import { checkVcapReadable } from './check.js';
import { checkVcap, fixVcap } from './fix-file.js';
import { rebuildVcap } from './rebuild.js';
import { writeFrame } from '@vlink/bag-core/testing';

const dir = mkdtempSync(join(tmpdir(), 'vlink-vcap-maint-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const codecs = await loadCodecs();

const key = (f: Frame) =>
  `${f.timestamp} ${f.url} ${f.actionType} ${f.data.length} ${f.data[0] ?? -1} ${f.data[f.data.length - 1] ?? -1}`;

function check(bytes: Uint8Array) {
  return checkVcapReadable(new MemoryReadable(bytes), codecs, 'mem.vcap');
}

function rebuild(bytes: Uint8Array) {
  const sink = new MemoryWritable();
  const report = rebuildVcap(new MemoryReadable(bytes), sink, codecs, 'mem.vcap');
  return { report, bytes: sink.bytes() };
}

/** The frames of a file as our reader sees them (tryToFix) and as `@mcap/core`'s indexed reader sees them. */
async function readBoth(bytes: Uint8Array): Promise<{ ours: string[]; theirs: number }> {
  const reader = await openBytes(bytes, true);
  const ours = readFrames(reader).map(key);
  reader.close();
  const indexed = await mcapIndexed(bytes);
  let theirs = 0;
  for await (const _ of indexed.readMessages()) theirs++;
  for await (const _ of indexed.readMetadata()) void _;
  // The indexed reader reads messages through chunk indexes only; an unchunked file is checked by the stream reader.
  if (indexed.chunkIndexes.length === 0) theirs = (await mcapStream(bytes)).filter((r) => r.type === 'Message').length;
  return { ours, theirs };
}

/** A VLink file whose writer died: `commit()` after `committed` frames, the rest still in the open chunk. */
async function crashed(frames: Frame[], committed: number, config: Partial<WriterConfig>): Promise<Uint8Array> {
  const writable = new MemoryWritable();
  const writer = new VcapFileWriter({
    writable,
    codecs,
    config: resolveWriterConfig(config),
    context: testContext(),
    file: 'mem.vcap',
  });
  frames.slice(0, committed).forEach((f) => {
    writeFrame(writer, f);
  });
  writer.commit();
  frames.slice(committed).forEach((f) => {
    writeFrame(writer, f);
  });
  return writable.bytes(); // never closed: no VLinkChannel_*, no summary, no footer
}

const configs: Array<[string, Partial<WriterConfig>]> = [
  ['small chunks', { cacheSize: 700 }],
  ['zstd chunks with CRC', { cacheSize: 2000, compress: 'zstd', enableChunkCrc: true }],
  ['no chunking', { cacheSize: 0 }],
  ['spilled big payloads', { cacheSize: 256 * 1024, enableChunkCrc: true }],
];

describe('.vcap check', () => {
  for (const [name, config] of configs) {
    test(`a clean file passes (${name}); rebuilding it keeps it byte-identical in its data`, async () => {
      const bytes = await recordToBytes(mixedFrames(90, name.startsWith('spilled') ? 7 : 0), config);
      const report = check(bytes);
      assert.deepEqual(report.problems, []);
      assert.equal(report.messages, 90);
      const { report: fix, bytes: again } = rebuild(bytes);
      assert.deepEqual(
        [fix.kept, fix.droppedBytes, fix.droppedChunks, fix.rebuiltChannelMetadata, fix.rebuiltHeader],
        [90, 0, 0, 0, false],
      );
      assert.deepEqual(check(again).problems, []);
      // Same records up to the summary: the rewrite copies the data section verbatim and rebuilds the same indexes.
      assert.deepEqual(again, bytes);
    });
  }

  test('a summary that disagrees with the data is reported', async () => {
    const bytes = await recordToBytes(mixedFrames(40), { cacheSize: 500 });
    const { headerEnd } = readHeader(new MemoryReadable(bytes), undefined);
    const summary = readSummary(new MemoryReadable(bytes), headerEnd, undefined);
    // Statistics' message count: the first u64 after the record prefix; then recompute the summary CRC.
    const patched = bytes.slice();
    const view = new DataView(patched.buffer);
    const statsAt = findOpcode(patched, summary.dataEnd, 0x0b);
    view.setBigUint64(statsAt + 9, 41n, true);
    const footerAt = patched.length - MAGIC.length - FOOTER_RECORD;
    view.setUint32(footerAt + 25, crc32(patched.subarray(summary.dataEnd, footerAt + 25)), true);
    const report = check(patched);
    assert.equal(report.ok, false);
    assert.ok(
      report.problems.some((p) => p.includes('messageCount is 41')),
      report.problems.join('\n'),
    );
  });

  test('a flipped byte in a CRC-checked chunk fails; an unfinished file fails', async () => {
    const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 1500, compress: 'zstd', enableChunkCrc: true });
    const flipped = bytes.slice();
    flipped[Math.floor(bytes.length / 3)]! ^= 0x10;
    assert.equal(check(flipped).ok, false);
    const unfinished = await crashed(mixedFrames(60), 30, { cacheSize: 1500 });
    const report = check(unfinished);
    assert.equal(report.ok, false);
    assert.match(report.problems.join('\n'), /footer or summary/);
  });
});

describe('.vcap fix', () => {
  for (const [name, config] of configs) {
    test(`an unfinished file (${name}) becomes complete: every committed frame kept, VLinkChannel_* rebuilt`, async () => {
      const frames = mixedFrames(80, name.startsWith('spilled') ? 9 : 0);
      const bytes = await crashed(frames, 50, config);
      const { report, bytes: fixed } = rebuild(bytes);
      assert.ok(report.kept >= 50, `kept ${report.kept}`);
      assert.equal(report.droppedChunks, 0);
      assert.ok(report.rebuiltChannelMetadata > 0);
      assert.deepEqual(check(fixed).problems, []);
      const { ours, theirs } = await readBoth(fixed);
      assert.equal(theirs, report.kept);
      assert.deepEqual(ours, frames.slice(0, report.kept).map(key));
      const reader = await openBytes(fixed, false);
      const info = reader.info();
      reader.close();
      assert.equal(info.hasCompleted, true);
      assert.equal(info.messageCount, report.kept);
      const camera = info.urls.find((u) => u.url === 'dds://camera')!;
      assert.deepEqual([camera.type, camera.ser, camera.action], ['Event', 'pb.Image', 'Pub']);
      assert.equal(camera.count, frames.slice(0, report.kept).filter((f) => f.url === 'dds://camera').length);
    });

    test(`truncated anywhere (${name}): the repair passes check and keeps the readable prefix`, async () => {
      const frames = mixedFrames(60, name.startsWith('spilled') ? 9 : 0);
      const bytes = await recordToBytes(frames, config);
      const want = frames.map(key);
      const step = Math.max(1, Math.floor(bytes.length / 40));
      for (let cut = 200; cut < bytes.length; cut += step) {
        const part = bytes.subarray(0, cut);
        const before = await openBytes(part, true);
        const recovered = readFrames(before).length;
        before.close();
        const { report, bytes: fixed } = rebuild(part);
        assert.deepEqual(check(fixed).problems, [], `cut ${cut}`);
        assert.ok(report.kept >= recovered, `cut ${cut}: fix kept ${report.kept} < ${recovered} the reader recovers`);
        const { ours, theirs } = await readBoth(fixed);
        assert.equal(theirs, report.kept, `cut ${cut}`);
        assert.deepEqual(ours, want.slice(0, ours.length), `cut ${cut}: a prefix`);
      }
    });
  }

  test('a damaged chunk in the middle is dropped and the chunks after it kept; a garbled length is skipped by resync', async () => {
    const frames = mixedFrames(120);
    const bytes = await recordToBytes(frames, { cacheSize: 1200, compress: 'zstd', enableChunkCrc: true });
    const reader = await openBytes(bytes);
    const chunks = reader.mcap.chunkIndexes.map((c) => [Number(c.chunkStartOffset), Number(c.chunkLength)] as const);
    reader.close();
    const [offset, length] = chunks[2]!;
    // 1. A byte inside the compressed records: the chunk fails to decode or its CRC.
    const damaged = bytes.slice();
    damaged[offset + length - 5]! ^= 0xff;
    const one = rebuild(damaged);
    assert.equal(one.report.droppedChunks, 1);
    assert.equal(one.report.droppedBytes, length);
    assert.deepEqual(check(one.bytes).problems, []);
    assert.ok(one.report.kept < frames.length && one.report.kept > frames.length - 20);
    // 2. The chunk's length field: nothing after it lines up until the walk finds the next chunk.
    const garbled = bytes.slice();
    new DataView(garbled.buffer).setUint32(offset + 1, 0x7fff_0000, true);
    const two = rebuild(garbled);
    assert.deepEqual(check(two.bytes).problems, []);
    assert.equal(two.report.kept, one.report.kept);
    const got = readFrames(await openBytes(two.bytes)).map(key);
    const wanted = new Set(frames.map(key));
    assert.ok(got.every((k) => wanted.has(k)));
  });

  test('metadata that parses but says nonsense (a garbled value or key) is rewritten so the result passes check', async () => {
    const frames = mixedFrames(40);
    const bytes = await recordToBytes(frames, { cacheSize: 800 });
    const garbled = bytes.slice();
    const replace = (from: string, to: string) => {
      const at = indexOf(garbled, new TextEncoder().encode(from));
      assert.ok(at >= 0, from);
      garbled.set(new TextEncoder().encode(to), at);
    };
    replace('start_timestamp', 'start_timestamq'); // the key: the header now lacks start_timestamp
    replace('Event', 'Gvent'); // the first VLinkChannel_* type
    replace('timezone', 'timezonf');
    const before = check(garbled);
    assert.match(before.problems.join('\n'), /VLinkHeader has no timezone/);
    assert.match(before.problems.join('\n'), /type "Gvent"/);
    const { report, bytes: fixed } = rebuild(garbled);
    assert.equal(report.rebuiltHeader, true);
    assert.equal(report.rebuiltChannelMetadata, 1);
    assert.equal(report.kept, 40);
    assert.deepEqual(check(fixed).problems, []);
    const reader = await openBytes(fixed);
    assert.equal(reader.info().hasCompleted, true);
    // The start comes back from the header's date (the same instant, to the ms).
    const original = await openBytes(bytes);
    assert.equal(reader.info().startTimestamp, original.info().startTimestamp);
    original.close();
    assert.deepEqual(readFrames(reader).map(key), frames.map(key));
    reader.close();
  });

  test('a header zeroed with its VLinkHeader (fuzz .vcap seed 63 case 1761): the profile written again; the start, tag and process from a sidecar that agrees with the file', async () => {
    const frames = mixedFrames(40);
    const bytes = await recordToBytes(frames, { cacheSize: 800 });
    const original = await openBytes(bytes);
    const info = original.info();
    original.close();
    // From the MCAP header's length field to the end of the VLinkHeader record: the profile and every header value.
    const name = indexOf(bytes, new TextEncoder().encode('VLinkHeader'));
    const recordAt = name - 4 - 9;
    const recordEnd =
      recordAt + 9 + Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(recordAt + 1, true));
    const damaged = bytes.slice();
    damaged.fill(0, 11, recordEnd);
    const sidecar = sidecarOf(info);
    const repaired = async (file: string, beside: object | undefined) => {
      const path = join(dir, file);
      writeFileSync(path, damaged);
      if (beside) writeFileSync(`${path}.json`, JSON.stringify(beside));
      const report = await fixVcap(path);
      const fixed = new Uint8Array(readFileSync(path));
      assert.deepEqual(check(fixed).problems, [], file);
      const reader = await openBytes(fixed);
      const result = { report, info: reader.info(), frames: readFrames(reader).map(key) };
      reader.close();
      return result;
    };

    const agreed = await repaired('zeroed-header.vcap', sidecar);
    assert.equal(agreed.report.rebuiltHeader, true);
    assert.match(agreed.report.problems.join('\n'), /profile was damaged/);
    assert.match(
      agreed.report.problems.join('\n'),
      /start_timestamp, tag, process, date, timezone taken from the summary sidecar/,
    );
    assert.equal(agreed.info.hasCompleted, true);
    assert.deepEqual(
      [agreed.info.startTimestamp, agreed.info.tagName, agreed.info.processName, agreed.info.dateTime],
      [info.startTimestamp, info.tagName, info.processName, info.dateTime],
    );
    assert.deepEqual(agreed.frames, frames.map(key));

    // A sidecar of another recording (other counts) is not believed: the start is the file's first message by its
    // statistics, and the report says so.
    const other = await repaired('zeroed-header-other.vcap', { ...sidecar, messageCount: 41, startTimestamp: 5 });
    assert.match(
      other.report.problems.join('\n'),
      /start_timestamp taken from the file's first message \(statistics\)/,
    );
    assert.equal(other.info.startTimestamp, Math.floor(info.startTimestamp + frames[0]!.timestamp / 1000));
    assert.equal(other.info.tagName, 'Empty');
    assert.equal(other.frames.length, frames.length);
  });

  test('fixVcap on disk: temp file + rename, the reader (readOnly: false) reads the repaired file; check() true after', async () => {
    const path = join(dir, 'crash.vcap');
    const writer = new VcapFileWriter({
      writable: new FileWritable(path),
      codecs,
      config: resolveWriterConfig({ cacheSize: 4096, compress: 'zstd' }),
      context: testContext(),
      file: path,
    });
    const frames = mixedFrames(200);
    frames.slice(0, 150).forEach((f) => {
      writeFrame(writer, f);
    });
    writer.commit();
    frames.slice(150).forEach((f) => {
      writeFrame(writer, f);
    });
    const readOnly = (await mcapBackend.openReader(path, { tryToFix: true })) as VcapReader;
    assert.equal(await readOnly.check(), false);
    await assert.rejects(readOnly.fix!(false), (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED');
    readOnly.close();
    const reader = (await mcapBackend.openReader(path, { readOnly: false, tryToFix: true })) as VcapReader;
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(await reader.fix!(false), true);
    assert.equal(reader.lastFixReport!.rewritten, true);
    assert.ok(reader.lastFixReport!.kept >= 150);
    assert.equal(reader.info().hasCompleted, true);
    assert.equal(await reader.check!(), true);
    assert.equal(readFrames(reader).length, reader.lastFixReport!.kept);
    // A complete file is left alone by fix(), rewritten by reindex().
    assert.equal(await reader.fix!(false), true);
    assert.equal(reader.lastFixReport!.rewritten, false);
    assert.equal(await reader.reindex!(), true);
    assert.equal(reader.lastFixReport!.rewritten, true);
    reader.close();
    assert.equal((await checkVcap(path)).ok, true);
    assert.equal((await mcapBackend.openReader(path, {})).info().hasCompleted, true);
    // No temporary file is left behind.
    assert.deepEqual(
      (await import('node:fs')).readdirSync(dir).filter((f) => f.includes('.fix-')),
      [],
    );
  });

  test('fixVcap refuses what is not MCAP with CORRUPT_FILE and leaves it untouched', async () => {
    const path = join(dir, 'garbage.vcap');
    writeFileSync(path, 'not an mcap file at all '.repeat(20));
    await assert.rejects(fixVcap(path), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    assert.equal(readFileSync(path, 'utf8'), 'not an mcap file at all '.repeat(20));
    await assert.rejects(
      fixVcap(join(dir, 'missing.vcap')),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND',
    );
  });
});

function indexOf(bytes: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let k = 0; k < needle.length; k++) if (bytes[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

function findOpcode(bytes: Uint8Array, from: number, opcode: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let p = from; p + 9 <= bytes.length; ) {
    if (bytes[p] === opcode) return p;
    p += 9 + view.getUint32(p + 1, true);
  }
  throw new Error(`no record ${opcode}`);
}
