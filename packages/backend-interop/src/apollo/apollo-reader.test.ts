import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { checkFixture } from '../testing/check-fixture.js';
import { descriptorFiles } from '../testing/decode.js';
import { absentRecording, expectedRecordings, foreignPath } from '../testing/expected.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();

const dir = mkdtempSync(join(tmpdir(), 'vlink-apollo-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Ours (written by cyber-record), and the records of fixtures/foreign/real/apollo (written by Apollo itself).
const records = ['apollo/sensors.record', ...expectedRecordings('real/apollo').map((name) => `real/apollo/${name}`)];
for (const relative of records)
  test(`an Apollo record reads as cyber-record reads it: ${relative}`, { skip: absentRecording(relative) }, () =>
    readsAsCyberRecord(relative),
  );

test('a record named as cyber_recorder splits a recording (x.record.00000) opens as x.record does', async () => {
  const numbered = join(dir, 'sensors.record.00000');
  copyFileSync(foreignPath('apollo', 'sensors.record'), numbered);
  const plain = await readAll(foreignPath('apollo', 'sensors.record'));
  const split = await readAll(numbered);
  try {
    assert.equal(split.reader.getInfo().format, 'record');
    assert.ok(split.frames.length > 0);
    assert.deepEqual(
      split.frames.map((f) => [f.url, f.timestamp, f.sha256]),
      plain.frames.map((f) => [f.url, f.timestamp, f.sha256]),
    );
  } finally {
    plain.reader.close();
    split.reader.close();
  }
});

test('a record cut short, read with tryToFix: the problem says where the sections end and how much is not read', async () => {
  const bytes = readFileSync(foreignPath('apollo', 'sensors.record'));
  const whole = await readAll(foreignPath('apollo', 'sensors.record'));
  whole.reader.close();
  const cut = join(dir, 'cut.record');
  const length = Math.floor(bytes.length * 0.6);
  writeFileSync(cut, bytes.subarray(0, length));
  const { reader, frames } = await readAll(cut, { tryToFix: true });
  try {
    const info = reader.getInfo();
    assert.equal(info.hasCompleted, false);
    assert.ok(frames.length < whole.frames.length, 'a chunk past the cut is lost');
    const problem = info.metadata?.find((m) => m.name === 'record.header')?.values['problem'] ?? '';
    const end = /the sections end at offset (\d+): .* \((\d+) bytes not read\)/.exec(problem);
    assert.ok(end, problem);
    assert.equal(Number(end[1]) + Number(end[2]), length, 'from the last whole section to the end of the file');
    // The same words under the name every foreign reader lists its problems by (shown by `vlink-bag info`).
    const problems = info.metadata?.find((m) => m.name === 'record.problems')?.values;
    assert.deepEqual(problems, { '0': problem });
  } finally {
    reader.close();
  }
});

test('the scan of a record without its index skips a chunk body that does not decode, and reads on', async () => {
  // Before, the first section that did not decode ended the scan: every chunk after it was lost.
  const bytes = new Uint8Array(readFileSync(foreignPath('apollo', 'sensors.record')));
  const whole = await readAll(foreignPath('apollo', 'sensors.record'));
  whole.reader.close();
  // The first three bytes of the second chunk body (its section at 5496) garbled, and the index cut off (95 %: a recorder that
  // stopped while it closed the record).
  for (const at of [5512, 5513, 5514]) bytes[at] = bytes[at]! ^ 0xff;
  const path = join(dir, 'garbled-unindexed.record');
  writeFileSync(path, bytes.subarray(0, Math.floor(bytes.length * 0.95)));
  const { reader, frames } = await readAll(path, { tryToFix: true });
  try {
    const problem = reader.getInfo().metadata?.find((m) => m.name === 'record.problems')?.values['0'] ?? '';
    assert.match(problem, /1 section\(s\) that do not decode skipped: bad chunk body: .* \(offset 5496\)/);
    const key = (f: { url: string; timestamp: number; sha256: string }) => `${f.url} ${f.timestamp} ${f.sha256}`;
    const known = new Set(whole.frames.map(key));
    assert.ok(frames.length > 0 && frames.length < whole.frames.length);
    assert.ok(
      frames.every((f) => known.has(key(f))),
      'no message made up',
    );
    assert.equal(key(frames.at(-1)!), key(whole.frames.at(-1)!), 'the chunk after the garbled one is read');
  } finally {
    reader.close();
  }
});

test('a channel descriptor that does not decode: refused strict; tryToFix reads its messages without a schema', async () => {
  // Found by probing: 64 zeroed bytes in the index's channel cache (its ProtoDesc), and tryToFix read nothing.
  const bytes = new Uint8Array(readFileSync(foreignPath('apollo', 'sensors.record')));
  bytes.fill(0, 8845, 8845 + 64);
  const path = join(dir, 'descriptor.record');
  writeFileSync(path, bytes);
  await assert.rejects(readAll(path), /bad proto descriptor of channel \/apollo\/canbus\/chassis/);
  const { reader, frames } = await readAll(path, { tryToFix: true });
  try {
    assert.equal(frames.length, 64);
    const info = reader.getInfo();
    assert.equal(info.hasCompleted, false);
    assert.match(
      info.metadata?.find((m) => m.name === 'record.problems')?.values['0'] ?? '',
      /^the descriptors of 1 channel\(s\) do not decode, so their messages are read without a schema: \/apollo\/canbus\/chassis \(/,
    );
    assert.ok(!reader.getSchemas().some((s) => s.name === 'apollo.canbus.Chassis'));
  } finally {
    reader.close();
  }
});

async function readsAsCyberRecord(relative: string): Promise<void> {
  const { reader, info, schemas, expected } = await checkFixture(relative);
  try {
    assert.equal(info.format, 'record');
    assert.equal(info.version, expected['version']);
    assert.ok(info.urls.every((u) => u.schemaType === SchemaType.Protobuf && u.encoding === 'protobuf'));
    // Each channel's ProtoDesc tree becomes a FileDescriptorSet: dependencies first, each file once.
    for (const topic of expected.topics) {
      const schema = schemas.find((s) => s.name === topic.type);
      assert.ok(schema, topic.type);
      assert.equal(schema.encoding, 'protobuf');
      assert.deepEqual(descriptorFiles(schema), topic.descriptor_files);
    }
    const header = info.metadata?.find((m) => m.name === 'record.header')?.values;
    assert.equal(header?.['message_number'], String(expected['message_count']));
    assert.equal(header?.['begin_time_ns'], expected['begin_time_ns']);
    assert.equal(header?.['end_time_ns'], expected['end_time_ns']);
    assert.equal(header?.['is_complete'], 'true');
  } finally {
    reader.close();
  }
}
