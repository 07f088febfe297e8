import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapIndexedReader } from '@mcap/core';
import { ActionType, BagError, BagWriter, type InfoMetadata, SchemaType } from '@vlink/bag-core';
import { wellKnownSchemaEncoding } from '@vlink/bag-mcap';
import { after, describe, test } from '@vlink/fixtures/test';
import { loadMcapCodecs } from '../common/lz4.js';
import { copyBag, FIXTURES } from '../testing/copy.js';
import { foreignPath } from '../testing/expected.js';
import { streamMessages } from '../testing/mcap-stream.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-interop-mcap-writer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What a source lists that is not a record of it (reader descriptions and our own header record). */
const isDescription = (m: InfoMetadata) =>
  m.name === 'mcap.header' || m.name.startsWith('mcap.channel.') || m.name === 'VLinkHeader';

async function indexed(path: string): Promise<McapIndexedReader> {
  const bytes = readFileSync(path);
  const codecs = await loadMcapCodecs();
  return McapIndexedReader.Initialize({
    readable: {
      size: async () => BigInt(bytes.length),
      read: async (offset, length) => bytes.subarray(Number(offset), Number(offset + length)),
    },
    decompressHandlers: { zstd: (data, size) => codecs['zstd']!.decompress(data, Number(size)) },
  });
}

describe('foreign → .mcap (clone) keeps messages, times, sequences, encodings, schemas, records, attachments', () => {
  for (const fixture of FIXTURES) {
    test(fixture, async () => {
      const out = join(dir, `${fixture.replace(/[/.]/g, '_')}.mcap`);
      await copyBag(foreignPath(fixture), out, true);
      const source = await readAll(foreignPath(fixture));
      const copy = await readAll(out);
      try {
        const [src, dst] = [source.reader.getInfo(), copy.reader.getInfo()];
        // Every message in the same order with its time, publish time (the log time where the source has none),
        // sequence (where the source has one), type, family and payload bytes.
        assert.ok(source.frames.length > 10);
        assert.deepEqual(
          copy.frames.map((f, i) => [
            f.url,
            f.timestamp,
            f.publishTime,
            source.frames[i]?.sequence === undefined ? undefined : f.sequence,
            f.serType,
            f.schemaType,
            f.sha256,
          ]),
          source.frames.map((f) => [
            f.url,
            f.timestamp,
            f.publishTime ?? f.timestamp,
            f.sequence,
            f.serType,
            f.schemaType,
            f.sha256,
          ]),
        );
        // The source's encodings per url (ros1, cdr, protobuf, json, ulog, …), schemas under the registry's names.
        assert.deepEqual(
          dst.urls.map((u) => [u.url, u.ser, u.encoding, u.count]),
          src.urls.map((u) => [u.url, u.ser, u.encoding, u.count]),
        );
        assert.deepEqual(
          copy.reader.getSchemas().map((s) => [s.name, s.encoding, Buffer.from(s.data).toString('hex')]),
          source.reader
            .getSchemas()
            .filter((s) => s.data.length > 0)
            .map((s) => [s.name, wellKnownSchemaEncoding(s.encoding), Buffer.from(s.data).toString('hex')]),
        );
        // Header, metadata records and attachments (bytes too).
        assert.deepEqual(
          [dst.startTimestamp, dst.processName, dst.tagName, dst.timezone],
          [src.startTimestamp, src.processName, src.tagName, src.timezone],
        );
        assert.deepEqual(
          dst.metadata?.filter((m) => !isDescription(m)),
          src.metadata?.filter((m) => !isDescription(m)),
        );
        for (const channel of src.metadata?.filter((m) => m.name.startsWith('mcap.channel.')) ?? []) {
          const kept = dst.metadata?.find((m) => m.name === channel.name);
          assert.deepEqual({ ...kept?.values, ...channel.values }, kept?.values, channel.name);
        }
        assert.deepEqual(dst.attachments ?? [], src.attachments ?? []);
        for (const a of src.attachments ?? [])
          assert.deepEqual(copy.reader.getAttachment(a.index), source.reader.getAttachment(a.index));
      } finally {
        source.reader.close();
        copy.reader.close();
      }

      // The official TypeScript reader: every record's CRC checked while streaming, the same messages; its indexed
      // reader agrees on channels, schemas, statistics and attachments.
      const streamed = await streamMessages(out);
      assert.deepEqual(
        streamed.map((m) => [m.topic, m.sha256]),
        source.frames.map((f) => [f.url, f.sha256]),
      );
      const reader = await indexed(out);
      assert.equal(reader.statistics?.messageCount, BigInt(source.frames.length));
      for (const channel of reader.channelsById.values()) {
        assert.notEqual(channel.messageEncoding, '', channel.topic);
        const schema = reader.schemasById.get(channel.schemaId);
        if (channel.messageEncoding === 'ros1') assert.equal(schema?.encoding, 'ros1msg', channel.topic);
        if (channel.messageEncoding === 'protobuf') assert.equal(schema?.encoding, 'protobuf', channel.topic);
        if (channel.messageEncoding === 'cdr' && schema) assert.match(schema.encoding, /^(ros2msg|ros2idl|omgidl)$/);
      }
      let attachments = 0;
      for await (const a of reader.readAttachments()) {
        assert.ok(a.name.length > 0);
        attachments++;
      }
      assert.equal(reader.statistics?.attachmentCount, attachments);
    });
  }
});

test('a written .mcap whose VLinkHeader start is garbled: CORRUPT_FILE, and with tryToFix its frames count from the first message (format reference §5.6)', async () => {
  const out = join(dir, 'garbled-header.mcap');
  const writer = await BagWriter.create(out, { syncMode: true, startTimestamp: 1_700_000_000_000 });
  for (let i = 0; i < 20; i++)
    writer.push({
      timestamp: 5_000 + i * 1_000,
      url: i % 2 ? '/a' : '/b',
      data: Uint8Array.of(i, i + 1),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
  const sound = await readAll(out);
  sound.reader.close();
  assert.equal(sound.frames[0]!.timestamp, 5_000);
  const bytes = new Uint8Array(readFileSync(out));
  const key = new TextEncoder().encode('start_timestamp');
  let at = -1;
  for (let i = 0; i + key.length <= bytes.length && at < 0; i++) if (key.every((b, j) => bytes[i + j] === b)) at = i;
  assert.ok(at > 0);
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(at + key.length, true);
  const last = at + key.length + 4 + length - 1;
  bytes[last] = bytes[last] === 0x39 ? 0x30 : bytes[last]! + 1; // one garbled digit of the start
  writeFileSync(out, bytes);
  await assert.rejects(
    readAll(out),
    (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /header_crc32/.test(e.message),
  );
  const tolerant = await readAll(out, { tryToFix: true });
  try {
    assert.equal(tolerant.reader.getInfo().hasCompleted, false);
    // Not a time moved by the garbled digit: the header is not used, the first message is the start.
    assert.deepEqual(
      tolerant.frames.map((f) => [f.url, f.timestamp, f.sha256]),
      sound.frames.map((f) => [f.url, f.timestamp - 5_000, f.sha256]),
    );
  } finally {
    tolerant.reader.close();
  }
});
