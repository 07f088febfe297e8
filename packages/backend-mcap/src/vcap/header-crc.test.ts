import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import type { Frame } from '@vlink/bag-core';
import { MemoryReadable } from '../io/memory-readable.js';
import { loadCodecs } from '../codecs.js';
import { checkVcapReadable } from '../maintenance/check.js';
import { fixVcap } from '../maintenance/fix-file.js';
import { HEADER_CRC_KEY, headerCrc, headerIntact, withHeaderCrc } from './header-crc.js';
import { VcapReader } from './vcap-reader.js';
import { mcapStream, mixedFrames, openBytes, readFrames, recordToBytes, sidecarOf } from './vcap.test.helper.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-header-crc-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const codecs = await loadCodecs();
const text = new TextEncoder();
const key = (f: Frame) => `${f.timestamp} ${f.url} ${f.actionType} ${f.data.length} ${f.data[0] ?? -1}`;

function indexOf(bytes: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** `bytes` with the last digit of the VLinkHeader's `start_timestamp` value changed (a garbled byte, as fuzzing found). */
function garbledStart(bytes: Uint8Array): Uint8Array {
  const at = indexOf(bytes, text.encode('start_timestamp'));
  assert.ok(at > 0);
  const valueAt = at + 'start_timestamp'.length + 4;
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(at + 'start_timestamp'.length, true);
  const out = bytes.slice();
  const last = valueAt + length - 1;
  out[last] = out[last] === 0x39 ? 0x30 : out[last]! + 1;
  return out;
}

describe('VLinkHeader header_crc32 (format reference §5.6)', () => {
  test('the CRC-32 of the other entries as key=value lines in key order (checked against Python zlib.crc32)', () => {
    const entries: Array<[string, string]> = [
      ['tag', 'drive-1'],
      ['version', '2.1.0'],
      ['compress', 'zstd'],
      ['process', 'proc'],
      ['date', '2026/03/17 10:00:00:123'],
      ['timezone', '480'],
      ['start_timestamp', '1773712800123'],
    ];
    // python3 -c "import zlib; print(zlib.crc32(b'compress=zstd\ndate=2026/03/17 10:00:00:123\n…version=2.1.0\n'))"
    assert.equal(headerCrc(entries), '3237806072');
    assert.equal(headerCrc([['tag', 'Ünïcode ✓']]), '2355903273'); // UTF-8, as the record stores it
    // Keys in code point order (Python's sorted), where UTF-16 order would put U+10000 before U+E000.
    assert.equal(
      headerCrc([
        ['\u{10000}', 'b'],
        ['\u{E000}', 'a'],
        ['tag', 'x'],
      ]),
      '1232498351',
    );
    // Its own entry and the order of the others do not count.
    assert.equal(headerCrc([...entries].reverse().concat([[HEADER_CRC_KEY, '1']])), '3237806072');
    const sealed = new Map(withHeaderCrc(entries));
    assert.equal(sealed.get(HEADER_CRC_KEY), '3237806072');
    assert.equal(headerIntact(sealed), true);
    assert.equal(headerIntact(new Map(entries)), undefined, "VLink's own headers have none");
    sealed.set('tag', 'drive-2');
    assert.equal(headerIntact(sealed), false);
  });

  test('the writer seals its header; a garbled start is a typed error, not frames moved by a millisecond', async () => {
    const frames = mixedFrames(30);
    const bytes = await recordToBytes(frames, { cacheSize: 800, compress: 'zstd' });
    const header = (await mcapStream(bytes)).find((r) => r.type === 'Metadata' && r.name === 'VLinkHeader');
    assert.ok(header?.type === 'Metadata');
    assert.equal(headerIntact(header.metadata), true);

    const damaged = garbledStart(bytes);
    await assert.rejects(
      openBytes(damaged),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /header_crc32/.test(e.message) && e.offset! > 0,
    );
    // check() names the record; verifyCrc: false takes the header as it is (the caller chose to).
    const report = checkVcapReadable(new MemoryReadable(damaged), codecs, 'mem.vcap');
    assert.match(report.problems.join('\n'), /VLinkHeader record at \d+ is damaged: its header_crc32 does not match/);
    const unchecked = VcapReader.open(
      'mem.vcap',
      { readOnly: true, verifyCrc: false },
      codecs,
      new MemoryReadable(damaged),
    );
    assert.equal(unchecked.info().hasCompleted, true);
    unchecked.close();
    // tryToFix without anything to confirm the values: read, but the file says it is incomplete.
    const tolerant = await openBytes(damaged, true);
    assert.equal(tolerant.info().hasCompleted, false);
    assert.equal(readFrames(tolerant).length, frames.length);
    tolerant.close();
  });

  test('tryToFix and fix take the start from a summary sidecar that agrees with the file, and say so', async () => {
    const frames = mixedFrames(30);
    const bytes = await recordToBytes(frames, { cacheSize: 800 });
    const original = await openBytes(bytes);
    const info = original.info();
    original.close();
    const sidecar = sidecarOf(info);
    const path = join(dir, 'garbled-start.vcap');
    writeFileSync(path, garbledStart(bytes));
    writeFileSync(`${path}.json`, JSON.stringify(sidecar));

    const reader = VcapReader.open(path, { readOnly: true, tryToFix: true }, codecs);
    assert.equal(reader.info().startTimestamp, info.startTimestamp);
    assert.equal(reader.info().hasCompleted, false);
    assert.deepEqual(readFrames(reader).map(key), frames.map(key));
    reader.close();

    const report = await fixVcap(path);
    assert.equal(report.rebuiltHeader, true);
    assert.match(report.problems.join('\n'), /VLinkHeader damaged .*start_timestamp.* taken from the summary sidecar/);
    const fixed = new Uint8Array(readFileSync(path));
    assert.deepEqual(checkVcapReadable(new MemoryReadable(fixed), codecs, path).problems, []);
    const after = await openBytes(fixed);
    assert.equal(after.info().hasCompleted, true);
    assert.equal(after.info().startTimestamp, info.startTimestamp);
    assert.deepEqual(readFrames(after).map(key), frames.map(key));
    after.close();
  });

  test('fix without a sidecar keeps the damaged header’s values, reseals it, and says nothing confirmed them', async () => {
    const frames = mixedFrames(20);
    const path = join(dir, 'garbled-alone.vcap');
    writeFileSync(path, garbledStart(await recordToBytes(frames, { cacheSize: 800 })));
    const report = await fixVcap(path);
    assert.match(
      report.problems.join('\n'),
      /VLinkHeader damaged .*its values kept, nothing outside the file confirms/,
    );
    const fixed = new Uint8Array(readFileSync(path));
    assert.deepEqual(checkVcapReadable(new MemoryReadable(fixed), codecs, path).problems, []);
    const after = await openBytes(fixed);
    assert.equal(readFrames(after).length, frames.length);
    after.close();
  });
});
