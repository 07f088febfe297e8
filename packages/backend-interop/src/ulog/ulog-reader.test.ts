import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '@vlink/fixtures/test';
import { decodeFrame } from '../testing/decode.js';
import { absentRecording, expectedRecordings, foreignPath, loadExpected } from '../testing/expected.js';
import { sampleDigest, type UlogDigest } from '../testing/ulog-digest.js';
import { assertUlogFields } from '../testing/fields.js';
import { readAll, type ReadFrame } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';
import { ULOG_URLS } from './ulog-reader.js';

registerAll();

interface UlogExpected {
  /** pyulog found damage (and read around it): we read it with tryToFix, and must say what we skipped. */
  file_corruption: boolean;
  start_timestamp_us: number;
  datasets: Array<{ name: string; multi_id: number; count: number }>;
  /** One line per sample (our fixtures), or `message_digests`: one digest per topic instance (real logs). */
  messages?: Array<{ name: string; multi_id: number; timestamp_us: number; size: number; sha256: string }>;
  message_digests?: UlogDigest[];
  decoded: Array<{ name: string; multi_id: number; row: number; fields: Record<string, unknown> }>;
  info: Record<string, unknown>;
  info_multiple: Record<string, unknown>;
  initial_parameters: Record<string, unknown>;
  default_parameters: Record<string, Record<string, unknown>>;
  changed_parameters: Array<[number, string, number]>;
  logged_messages: Array<{ timestamp_us: number; log_level: number; message: string }>;
  logged_messages_tagged: Array<{ tag: number; timestamp_us: number; log_level: number; message: string }>;
  dropouts: Array<{ timestamp_us: number; duration_ms: number }>;
}

const urlOf = (name: string, multiId: number) => (multiId === 0 ? name : `${name}[${multiId}]`);
const view = (f: ReadFrame) => new DataView(f.data.buffer, f.data.byteOffset, f.data.byteLength);

// flight.ulg: the common shapes; edge.ulg: a nested type without a timestamp in an array of a nested type, a topic
// logged only with multi id 2, a 255-byte info key, continued info multiple, int32 and float parameters changed often;
// unknown-definition.ulg: an unknown message type before the formats; resubscribed.ulg: a message id reused;
// damaged.ulg: zeroed and garbled stretches, read with tryToFix as pyulog recovers from them.
for (const name of ['flight.ulg', 'edge.ulg', 'unknown-definition.ulg', 'resubscribed.ulg', 'damaged.ulg'])
  test(`a ULog reads as pyulog reads it: ${name}`, () => readsAsPyulog('ulog', name));

// Logs written by PX4 itself (fixtures/foreign/real/ulog: appended data, dropouts, tagged logging, multi-instance
// topics), each sample checked through the digests of its topic instance.
for (const name of expectedRecordings('real/ulog'))
  test(`a real PX4 log reads as pyulog reads it: ${name}`, { skip: absentRecording(`real/ulog/${name}`) }, () =>
    readsAsPyulog('real/ulog', name),
  );

test('damage stepped over as pyulog does, and each stretch of skipped bytes and each bad sample reported', async () => {
  // damaged.ulg: 10 zero bytes and the two samples after them, up to the end of the next sync message (55 bytes);
  // an unknown message up to the end of the sync inside it (13); 5 zero bytes without a sync after them, walked;
  // an `acc` sample of 14 bytes where its format has 12.
  const { reader } = await readAll(foreignPath('ulog', 'damaged.ulg'), { tryToFix: true });
  try {
    const problems = Object.values(reader.getInfo().metadata?.find((m) => m.name === 'ulog.problems')?.values ?? {});
    assert.deepEqual(
      problems.map((p) => p.replace(/(?<=(resume at|offset) )\d+/g, 'N')),
      [
        ...[55, 13, 5].map((n) => `${n} damaged bytes skipped (messages resume at N) at offset N`),
        'acc sample of 14 bytes, its format has 12 at offset N',
      ],
    );
  } finally {
    reader.close();
  }
});

test('a message id subscribed again for another topic: each sample under the topic current at it', async () => {
  // pyulog drops the first topic's samples (one subscription per id); we keep them under their own url, and the
  // samples after the new subscription are the new topic's (the generic test above checks those against pyulog).
  const { reader, frames } = await readAll(foreignPath('ulog', 'resubscribed.ulg'));
  try {
    const start = reader.getInfo().startTimestamp * 1000;
    const acc = frames.filter((f) => f.url === 'acc');
    assert.deepEqual(
      acc.map((f) => [f.timestamp, f.size, view(f).getFloat32(8, true)]),
      [0, 1, 2].map((i) => [2_000 + i - start, 12, i]),
    );
    assert.deepEqual(
      reader.getInfo().urls.map((u) => [u.url, u.count]),
      [
        ['acc', 3],
        ['gps', 2],
      ],
    );
  } finally {
    reader.close();
  }
});

async function readsAsPyulog(folder: string, name: string): Promise<void> {
  const expected = loadExpected(`${folder}/${name}`) as unknown as UlogExpected;
  const path = foreignPath(folder, name);
  if (expected.file_corruption) await assert.rejects(readAll(path), { code: 'CORRUPT_FILE' });
  const { reader, frames } = await readAll(path, { tryToFix: expected.file_corruption });
  try {
    const info = reader.getInfo();
    const times = [
      ...(expected.messages ?? []).map((m) => m.timestamp_us),
      ...(expected.message_digests ?? []).flatMap((d) => d.first_timestamp_us ?? []),
      ...expected.logged_messages.map((m) => m.timestamp_us),
    ];
    const startMs = Math.floor(Math.min(expected.start_timestamp_us, ...times) / 1000);
    assert.equal(info.startTimestamp, startMs);
    const us = (t: number) => t - startMs * 1000;
    assert.equal(info.format, 'ulog');
    assert.equal(info.hasCompleted, !expected.file_corruption);

    // Every sample of every topic instance: time, size and payload bytes, in file order per url.
    for (const dataset of expected.datasets) {
      const url = urlOf(dataset.name, dataset.multi_id);
      const meta = info.urls.find((u) => u.url === url);
      assert.ok(meta, url);
      assert.equal(meta.ser, dataset.name);
      assert.equal(meta.encoding, 'ulog');
      assert.equal(meta.count, dataset.count);
      const samples = frames.filter((f) => f.url === url);
      const digest = expected.message_digests?.find((d) => d.name === dataset.name && d.multi_id === dataset.multi_id);
      if (digest) {
        const { name: _name, multi_id: _multiId, ...want } = digest;
        assert.deepEqual(sampleDigest(samples, startMs * 1000), want, url);
      } else
        assert.deepEqual(
          samples.map((f) => [f.timestamp, f.size, f.sha256]),
          (expected.messages ?? [])
            .filter((m) => m.name === dataset.name && m.multi_id === dataset.multi_id)
            .map((m) => [us(m.timestamp_us), m.size, m.sha256]),
          url,
        );
    }
    for (const sample of expected.decoded) {
      const url = urlOf(sample.name, sample.multi_id);
      const frame = frames.filter((f) => f.url === url)[sample.row]!;
      assertUlogFields(decodeFrame(info, reader.getSchemas(), frame) as Record<string, unknown>, sample.fields);
    }

    // The messages that are not samples, through the decoder every surface uses (their layout is the format's).
    const decoded = (url: string) =>
      frames
        .filter((f) => f.url === url)
        .map(
          (f): Record<string, unknown> => ({
            at: f.timestamp,
            ...(decodeFrame(info, reader.getSchemas(), f) as object),
          }),
        );
    assert.deepEqual(
      decoded(ULOG_URLS.logging).map((d) => [d.at, d['timestamp'], d['log_level'], d['message']]),
      expected.logged_messages.map((m) => [us(m.timestamp_us), m.timestamp_us, m.log_level, m.message]),
    );
    assert.deepEqual(
      decoded(ULOG_URLS.loggingTagged).map((d) => [d.at, d['timestamp'], d['log_level'], d['tag'], d['message']]),
      expected.logged_messages_tagged.map((m) => [us(m.timestamp_us), m.timestamp_us, m.log_level, m.tag, m.message]),
    );
    assert.deepEqual(
      decoded(ULOG_URLS.dropout).map((d) => [d.at, d['duration']]),
      expected.dropouts.map((d) => [us(d.timestamp_us), d.duration_ms]),
    );
    assert.deepEqual(
      decoded(ULOG_URLS.parameter).map((d) => [d.at, d['name'], d['value']]),
      expected.changed_parameters.map(([t, key, value]) => [us(t), key, value]),
    );
    assert.equal(frames.length, info.messageCount);

    const entry = (name: string) => info.metadata?.find((m) => m.name === name)?.values;
    const strings = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
    assert.deepEqual(entry('ulog.info'), strings(expected.info));
    assert.deepEqual(entry('ulog.parameters'), strings(expected.initial_parameters));
    for (const [bit, values] of Object.entries(expected.default_parameters))
      assert.deepEqual(entry(`ulog.parameters_default.${bit}`), strings(values));
    assert.deepEqual(
      Object.fromEntries(Object.entries(entry('ulog.info_multiple') ?? {}).map(([k, v]) => [k, JSON.parse(v)])),
      expected.info_multiple,
    );
    assert.equal(entry('ulog.header')?.['timestamp_us'], String(expected.start_timestamp_us));
  } finally {
    reader.close();
  }
}

test('an info message whose key runs past it is left out and reported; the log reads on (found by fuzzing)', async () => {
  // Before, decodeKeyValue's RangeError escaped the reader untyped, even with tryToFix.
  const bytes = new Uint8Array(readFileSync(foreignPath('ulog', 'flight.ulg')));
  let at = 16; // after the file header: messages of (u16 size, u8 type, body)
  while (bytes[at + 2] !== 0x49) at += 3 + (bytes[at]! | (bytes[at + 1]! << 8));
  const size = bytes[at]! | (bytes[at + 1]! << 8);
  bytes[at + 3] = 255; // the key length, past the end of a body of `size` bytes
  assert.ok(size < 256);
  const dir = mkdtempSync(join(tmpdir(), 'vlink-ulog-key-'));
  try {
    const path = join(dir, 'bad-key.ulg');
    writeFileSync(path, bytes);
    await assert.rejects(readAll(path), (e: { code?: string; message?: string }) => {
      assert.equal(e.code, 'CORRUPT_FILE');
      assert.match(e.message ?? '', /I message left out: key runs past the message at offset \d+/);
      return true;
    });
    const intact = await readAll(foreignPath('ulog', 'flight.ulg'));
    intact.reader.close();
    const { reader, frames } = await readAll(path, { tryToFix: true });
    try {
      assert.equal(frames.length, intact.frames.length);
      const problems = Object.values(reader.getInfo().metadata?.find((m) => m.name === 'ulog.problems')?.values ?? {});
      assert.deepEqual(problems, [`I message left out: key runs past the message at offset ${at}`]);
    } finally {
      reader.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
