import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { Frame, WriterConfig } from '@vlink/bag-core';
import { loadCodecs } from '../codecs.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { MemoryWritable } from '../io/memory-writable.js';
import { Opcode, RECORD_PREFIX } from '../mcap/constants.js';
import { parseRecord } from '../mcap/record-parser.js';
import type { Chunk } from '../mcap/records.js';
import { readHeader } from '../mcap/summary.js';
import { mixedFrames, openBytes, readFrames, recordToBytes } from '../vcap/vcap.test.helper.js';
import { checkVcapReadable } from './check.js';
import { rebuildVcap } from './rebuild.js';

const codecs = await loadCodecs();
// The payload as base64 (exact, and native): a comma-joined list of its bytes made this file's zstd case take 39 s,
// 88 % of it in this function (frames of up to 300 KB, read back after each of hundreds of cuts).
const key = (f: Frame) =>
  `${f.timestamp} ${f.url} ${f.actionType} ${Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength).toString('base64')}`;

/** Every message of the file with the file offset where its bytes are complete (for a compressed chunk: its end). */
interface Layout {
  headerEnd: number;
  /** Record boundaries of the data section (top-level, and inside uncompressed chunks). */
  boundaries: number[];
  /** Per message, in file order: where the file must reach for it to be salvageable. */
  messageEnds: Array<{
    plainEnd: number;
    chunk?: { at: number; recordsAt: number; stored: number; compression: string };
  }>;
}

function layout(bytes: Uint8Array): Layout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { headerEnd } = readHeader(new MemoryReadable(bytes), 'x');
  const boundaries: number[] = [];
  const messageEnds: Layout['messageEnds'] = [];
  for (let at = headerEnd; at < bytes.length; ) {
    boundaries.push(at);
    const op = bytes[at]!;
    const length = RECORD_PREFIX + Number(view.getBigUint64(at + 1, true));
    if (op === Opcode.DataEnd) break;
    if (op === Opcode.Message) messageEnds.push({ plainEnd: at + length });
    if (op === Opcode.Chunk) {
      const chunk = parseRecord(bytes, view, at, at + length).record as Chunk;
      const recordsAt = at + chunk.recordsOffset - at;
      const stored = bytes.subarray(chunk.recordsOffset, chunk.recordsOffset + chunk.recordsLength);
      const plain = chunk.compression
        ? codecs[chunk.compression]!.decompress(stored, Number(chunk.uncompressedSize))
        : stored;
      const pv = new DataView(plain.buffer, plain.byteOffset, plain.byteLength);
      for (let p = 0; p < plain.length; ) {
        const n = RECORD_PREFIX + pv.getUint32(p + 1, true);
        if (!chunk.compression) boundaries.push(recordsAt + p);
        if (plain[p] === Opcode.Message)
          messageEnds.push({
            plainEnd: p + n,
            chunk: { at, recordsAt, stored: chunk.recordsLength, compression: chunk.compression },
          });
        p += n;
      }
    }
    at += length;
  }
  return { headerEnd, boundaries, messageEnds };
}

/** The messages a cut at `cut` leaves whole: before it in the file, or (zstd) inside the blocks that still decode. */
function completeBefore(bytes: Uint8Array, l: Layout, cut: number): number {
  let n = 0;
  const decoded = new Map<number, number>();
  for (const m of l.messageEnds) {
    if (!m.chunk) {
      if (m.plainEnd <= cut) n++;
      continue;
    }
    const { at, recordsAt, stored, compression } = m.chunk;
    if (at + (recordsAt - at) + stored <= cut) n++;
    else if (!compression) {
      if (recordsAt + m.plainEnd <= cut) n++;
    } else if (cut > recordsAt) {
      let prefix = decoded.get(at);
      if (prefix === undefined) {
        prefix = codecs[compression]!.decompressPrefix!(bytes.subarray(recordsAt, cut), 1 << 30).length;
        decoded.set(at, prefix);
      }
      if (m.plainEnd <= prefix) n++;
    }
  }
  return n;
}

function salvage(bytes: Uint8Array) {
  const out = new MemoryWritable();
  const report = rebuildVcap(new MemoryReadable(bytes, 'cut.vcap'), out, codecs, 'cut.vcap');
  return { report, bytes: out.bytes() };
}

const configs: Array<[string, Partial<WriterConfig>]> = [
  ['uncompressed chunks', { cacheSize: 1500 }],
  ['zstd chunks', { cacheSize: 300_000, compress: 'zstd' }],
];

describe('salvaging a cut .vcap', () => {
  for (const [name, config] of configs) {
    test(`${name}: a cut at every record boundary and inside records keeps exactly the complete messages`, async () => {
      // Big enough zstd chunks to span several zstd blocks (128 KiB each), so a cut leaves whole blocks behind.
      const zstd = name.startsWith('zstd');
      const frames = mixedFrames(zstd ? 30 : 60, zstd ? 3 : 0);
      const bytes = await recordToBytes(frames, config);
      const original = readFrames(await openBytes(bytes)).map(key);
      const l = layout(bytes);
      const cuts = new Set<number>();
      for (const b of l.boundaries) for (const d of [0, 1, 5, 13, 40]) if (b + d < bytes.length) cuts.add(b + d);
      // Inside compressed chunks: a cut every ~40 KB (zstd blocks are 128 KiB of records).
      if (zstd) for (let c = l.headerEnd; c < bytes.length; c += 39_989) cuts.add(c);
      let withSalvage = 0;
      for (const cut of [...cuts].sort((a, b) => a - b)) {
        const { report, bytes: repaired } = salvage(bytes.subarray(0, cut));
        const expected = completeBefore(bytes, l, cut);
        assert.equal(report.kept, expected, `cut at ${cut}: kept ${report.kept}, ${expected} complete before it`);
        const check = checkVcapReadable(new MemoryReadable(repaired), codecs, 'repaired.vcap');
        assert.deepEqual(check.problems, [], `cut at ${cut}: the repaired file passes check`);
        // The frames are the original's first ones, byte for byte, in order.
        const got = readFrames(await openBytes(repaired)).map(key);
        assert.deepEqual(got, original.slice(0, expected), `cut at ${cut}: the same frames`);
        if (report.salvagedChunks > 0) withSalvage++;
      }
      assert.ok(withSalvage > 3, `some cuts fell inside chunks that were salvaged (${withSalvage})`);
    });
  }

  test('the channel metadata survives a cut: ser of raw and RPC urls, schemas; lost losses read as unknown', async () => {
    const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 1500 }, undefined, (w) =>
      w.setUrlLoss('dds://imu', 0.5),
    );
    const whole = (await openBytes(bytes)).info().urls;
    // Inside the last chunk: the VLinkChannel_* records after it are gone.
    const lastChunk = layout(bytes).messageEnds.at(-1)!.chunk!;
    const cut = bytes.subarray(0, lastChunk.recordsAt + 30);
    const repaired = (await openBytes(salvage(cut).bytes)).info().urls;
    for (const meta of repaired) {
      const before = whole.find((u) => u.url === meta.url && u.action === meta.action)!;
      assert.equal(meta.ser, before.ser, `${meta.url}: ser kept`);
      assert.equal(meta.schemaType, before.schemaType, `${meta.url}: family kept`);
      assert.equal(meta.type, before.type, `${meta.url}: type kept`);
      assert.equal(meta.loss, -1, `${meta.url}: the loss was in the lost VLinkChannel record`);
    }
    assert.ok(repaired.some((u) => u.url === 'dds://svc' && u.ser === 'pb.Req|pb.Resp'));
  });

  test('a flipped byte: the chunk is dropped whole (CRC), its messages counted as lost, the rest kept', async () => {
    const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 1500 });
    const l = layout(bytes);
    const victim = l.messageEnds[20]!.chunk!;
    const damaged = bytes.slice();
    damaged[victim.recordsAt + 40]! ^= 0x55;
    const { report, bytes: repaired } = salvage(damaged);
    const inVictim = l.messageEnds.filter((m) => m.chunk?.at === victim.at).length;
    assert.equal(report.droppedChunks, 1);
    assert.equal(report.lostMessages, inVictim);
    assert.equal(report.kept, 60 - inVictim);
    assert.deepEqual(checkVcapReadable(new MemoryReadable(repaired), codecs).problems, []);
  });
});

describe('salvaging a .vcap whose record lengths are damaged', () => {
  // Found by fuzzing: a message index whose length grew (22 → 4,118 bytes) or a record whose opcode and length byte
  // were overwritten still parsed, so the walk skipped by that length into the middle of the next chunk and lost it
  // (11 and 7 messages a reader still read through the summary).
  test('a record claiming the chunk after it: the walk resumes at the chunk, nothing is lost', async () => {
    const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 1500 });
    const original = readFrames(await openBytes(bytes)).map(key);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const l = layout(bytes);
    // The last top-level record before the third chunk (a message index of the second).
    const third = [...new Set(l.messageEnds.map((m) => m.chunk?.at))][2]!;
    const victim = l.boundaries.filter((b) => b < third && bytes[b] === Opcode.MessageIndex).at(-1)!;
    for (const [what, damage] of [
      ['a longer message index', (d: DataView) => d.setUint32(victim + 1, 4118, true)],
      [
        'an unknown opcode',
        (d: DataView) => {
          d.setUint8(victim, 0xff);
          d.setUint32(victim + 1, 127, true);
        },
      ],
    ] as const) {
      const damaged = bytes.slice();
      damage(new DataView(damaged.buffer));
      assert.ok(
        victim + RECORD_PREFIX + view.getUint32(victim + 1, true) <= third,
        'the record ended before the chunk',
      );
      const { report, bytes: repaired } = salvage(damaged);
      assert.equal(report.kept, 60, what);
      assert.deepEqual(readFrames(await openBytes(repaired)).map(key), original, what);
      assert.deepEqual(checkVcapReadable(new MemoryReadable(repaired), codecs).problems, [], what);
    }
  });
});

test('a message index turned into a loose message (opcode 7 → 5): the repair drops it, as the reader skips it', async () => {
  const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 1500 });
  const original = readFrames(await openBytes(bytes)).map(key);
  const l = layout(bytes);
  const victim = l.boundaries.filter((b) => bytes[b] === Opcode.MessageIndex)[2]!;
  const damaged = bytes.slice();
  damaged[victim] = Opcode.Message;
  const { report, bytes: repaired } = salvage(damaged);
  assert.equal(report.kept, 60);
  assert.ok(
    report.problems.some((p) => p.includes(`offset ${victim}`) && p.includes('a loose message record among chunks')),
  );
  assert.deepEqual(readFrames(await openBytes(repaired)).map(key), original);
  assert.deepEqual(checkVcapReadable(new MemoryReadable(repaired), codecs).problems, []);
});

describe('the data-section CRC', () => {
  test('a flipped byte outside any chunk (a metadata value) fails check, found on the walk', async () => {
    const bytes = await recordToBytes(mixedFrames(20), { cacheSize: 1500 });
    assert.deepEqual(checkVcapReadable(new MemoryReadable(bytes), codecs).problems, []);
    const at = Buffer.from(bytes).indexOf('Empty');
    assert.ok(at > 0, 'the VLinkHeader tag is in the data section');
    const damaged = bytes.slice();
    damaged[at] = 'F'.charCodeAt(0);
    const problems = checkVcapReadable(new MemoryReadable(damaged), codecs).problems;
    assert.ok(
      problems.some((p) => /data section CRC mismatch/.test(p)),
      problems.join('\n'),
    );
  });
});

describe('the VLinkHeader under a damaged name (found by fuzzing: every frame moved to the first one time)', () => {
  test('reading keeps the recording start, check names the damage, the repair writes the header back', async () => {
    const bytes = await recordToBytes(mixedFrames(30), { cacheSize: 1500 });
    const original = readFrames(await openBytes(bytes)).map(key);
    const damaged = bytes.slice();
    damaged[Buffer.from(bytes).indexOf('VLinkHeader') + 7] = 0xc2; // "VLinkHe\xc2der"
    // Cut at the DataEnd, so that no summary (whose index still names the record right) points at it.
    const dataEnd = layout(bytes).boundaries.find((b) => bytes[b] === Opcode.DataEnd)!;
    const cut = damaged.subarray(0, dataEnd);
    const reader = await openBytes(cut, true);
    try {
      assert.deepEqual(readFrames(reader).map(key), original);
      const quick = (await reader.verify({ quick: true })).problems.map((p) => p.message);
      assert.ok(
        quick.some((p) => /VLinkHeader record's name is damaged/.test(p)),
        quick.join('\n'),
      );
    } finally {
      reader.close();
    }
    const problems = checkVcapReadable(new MemoryReadable(damaged), codecs).problems;
    assert.ok(
      problems.some((p) => /VLinkHeader record at \d+ has a damaged name/.test(p)),
      problems.join('\n'),
    );
    for (const source of [damaged, cut]) {
      const { bytes: repaired } = salvage(source);
      assert.deepEqual(readFrames(await openBytes(repaired)).map(key), original);
      assert.deepEqual(checkVcapReadable(new MemoryReadable(repaired), codecs).problems, []);
    }
  });
});

describe('salvaging a .vcap whose bytes were copied over other bytes (found by fuzzing)', () => {
  test('a whole chunk copied over a later one: the copy is left out, no message is kept twice', async () => {
    const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 1500 });
    const original = readFrames(await openBytes(bytes)).map(key);
    const l = layout(bytes);
    const chunks = [...new Set(l.messageEnds.map((m) => m.chunk?.at))] as number[];
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const span = (at: number) => RECORD_PREFIX + Number(view.getBigUint64(at + 1, true));
    // A chunk no longer than the one it is copied over: the copy decodes (its CRC is its own), the rest is garbage.
    const [source, target] = [chunks[1]!, chunks.slice(2).find((c) => span(c) >= span(chunks[1]!))!];
    assert.ok(target !== undefined, 'a later chunk at least as long as the second');
    const damaged = bytes.slice();
    damaged.copyWithin(target, source, source + span(source));
    const inTarget = l.messageEnds.filter((m) => m.chunk?.at === target).length;
    const { report, bytes: repaired } = salvage(damaged);
    const got = readFrames(await openBytes(repaired)).map(key);
    assert.equal(new Set(got).size, got.length, 'no frame twice');
    assert.deepEqual(
      got,
      original.filter((_, i) => l.messageEnds[i]!.chunk?.at !== target),
      'every frame but those of the overwritten chunk, once',
    );
    assert.equal(report.kept, 60 - inTarget);
    assert.ok(
      report.problems.some((p) => p.includes(`chunk at offset ${target}`) && p.includes('a copy of the chunk')),
    );
    assert.deepEqual(checkVcapReadable(new MemoryReadable(repaired), codecs).problems, []);
  });

  test('a loose message whose opcode one bit made Header (5 → 1): the repair steps over it and keeps the rest', async () => {
    const bytes = await recordToBytes(mixedFrames(60), { cacheSize: 0 });
    const original = readFrames(await openBytes(bytes)).map(key);
    const victim = layout(bytes).boundaries.filter((b) => bytes[b] === Opcode.Message)[30]!;
    const damaged = bytes.slice();
    damaged[victim] = Opcode.Header;
    const { report, bytes: repaired } = salvage(damaged);
    assert.equal(report.kept, 59, 'every message but the damaged one');
    assert.deepEqual(readFrames(await openBytes(repaired)).map(key), [...original.slice(0, 30), ...original.slice(31)]);
    assert.deepEqual(checkVcapReadable(new MemoryReadable(repaired), codecs).problems, []);
  });
});
