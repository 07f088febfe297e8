import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { foreignPath } from '../testing/expected.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

// Records carry no checksum: a section copied over another (a bad sector remapped, a faulty copy) must not be read in
// the other's place. Each case copies whole sections of sensors.record (cyber-record's writer, 64 messages in three
// chunks) as such damage does.
registerAll();

const dir = mkdtempSync(join(tmpdir(), 'vlink-apollo-copied-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const original = new Uint8Array(readFileSync(foreignPath('apollo', 'sensors.record')));
const HEADER = 0;
const CHUNK_HEADER = 1;
const CHUNK_BODY = 2;
const INDEX = 3;

/** The sections of a record: type, offset and length (its 16-byte section header included). */
function sections(bytes: Uint8Array): Array<{ type: number; at: number; length: number }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = [];
  for (let at = 0; at + 16 <= bytes.length; ) {
    const type = view.getInt32(at, true);
    const length = 16 + (type === HEADER ? 2048 : Number(view.getBigInt64(at + 8, true)));
    out.push({ type, at, length });
    at += length;
  }
  return out;
}

const all = sections(original);
const bodies = all.filter((s) => s.type === CHUNK_BODY);
const chunkHeaders = all.filter((s) => s.type === CHUNK_HEADER);
const index = all.find((s) => s.type === INDEX)!;

async function failure(path: string, tryToFix: boolean): Promise<BagError> {
  try {
    const { reader } = await readAll(path, { tryToFix });
    reader.close();
  } catch (error) {
    assert.ok(error instanceof BagError, String(error));
    return error;
  }
  assert.fail(`${path} read without an error (tryToFix ${tryToFix})`);
}

test('a chunk body copied over another is CORRUPT_FILE; tryToFix leaves that chunk out, says so, reads the rest', async () => {
  assert.equal(bodies.length, 3);
  // The first body (2,012 bytes) over the second's room: read in its place, 25 messages came twice.
  const copied = original.slice();
  copied.copyWithin(bodies[1]!.at, bodies[0]!.at, bodies[0]!.at + bodies[0]!.length);
  const path = join(dir, 'body-copied.record');
  writeFileSync(path, copied);
  const error = await failure(path, false);
  assert.equal(error.code, 'CORRUPT_FILE');
  assert.match(
    error.message,
    /chunk body is not the one its chunk header describes: no message of it has its header's begin time/,
  );
  assert.equal(error.offset, bodies[1]!.at);
  // tryToFix: the chunks that read are read, each message once; the one that does not is named with its messages.
  // (Before, tryToFix failed at that chunk too, and `clone --try-to-fix`, which `check` points at, copied nothing.)
  const whole = await readAll(foreignPath('apollo', 'sensors.record'));
  whole.reader.close();
  const { reader, frames } = await readAll(path, { tryToFix: true });
  const info = reader.getInfo();
  const problem = problemOf(reader);
  reader.close();
  const keys = frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`);
  const known = new Set(whole.frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`));
  assert.ok(keys.every((k) => known.has(k)) && new Set(keys).size === keys.length, 'no message twice or made up');
  assert.equal(info.hasCompleted, false);
  assert.match(problem, /^1 chunk\(s\) that do not read skipped \((\d+) messages, as their chunk headers count them\)/);
  assert.equal(frames.length, whole.frames.length - Number(/\((\d+) messages/.exec(problem)![1]));
  // The last body (fewer messages) over the first: 11 messages were lost without a word.
  const shorter = original.slice();
  shorter.copyWithin(bodies[0]!.at, bodies[2]!.at, bodies[2]!.at + bodies[2]!.length);
  writeFileSync(path, shorter);
  const short = await failure(path, false);
  assert.match(short.message, /it holds \d+ messages, its header \d+/);
});

test('two index entries naming one chunk body: strict open refuses the index, tryToFix reads the sections', async () => {
  // The index's entry of the second body, pointed at the first (both offsets are 2-byte varints after field 2).
  const damaged = original.slice();
  const varint = (n: number) => [(n & 0x7f) | 0x80, n >> 7];
  const want = [0x10, ...varint(bodies[1]!.at)];
  const at = damaged.subarray(index.at).findIndex((_, i, b) => want.every((v, k) => b[i + k] === v));
  assert.ok(at >= 0, 'the entry of the second body');
  damaged.set([0x10, ...varint(bodies[0]!.at)], index.at + at);
  const path = join(dir, 'index-twice.record');
  writeFileSync(path, damaged);
  const error = await failure(path, false);
  assert.equal(error.code, 'CORRUPT_FILE');
  assert.match(error.message, /bad index section \(two entries name the same chunk body\); open with tryToFix/);
  const whole = await readAll(foreignPath('apollo', 'sensors.record'));
  whole.reader.close();
  const fixed = await readAll(path, { tryToFix: true });
  fixed.reader.close();
  assert.equal(fixed.frames.length, 64);
  assert.deepEqual(
    fixed.frames.map((f) => [f.url, f.timestamp, f.sha256]),
    whole.frames.map((f) => [f.url, f.timestamp, f.sha256]),
  );
});

test('the scan of a record without its index skips a chunk repeated whole, and a body without a header, and says so', async () => {
  const [first, second] = [0, 1].map((k) => ({ at: chunkHeaders[k]!.at, end: bodies[k]!.at + bodies[k]!.length }));
  const firstPair = original.subarray(first!.at, first!.end);
  const firstMessages = await messagesOfFirstChunk();
  // Header and body of the first chunk twice, then the file ends (the index is gone).
  const repeated = join(dir, 'repeated.record');
  writeFileSync(repeated, Buffer.concat([original.subarray(0, first!.end), firstPair]));
  const read = await readAll(repeated, { tryToFix: true });
  const problem = problemOf(read.reader);
  read.reader.close();
  assert.equal(read.frames.length, firstMessages, 'each message of the first chunk once');
  assert.match(
    problem,
    new RegExp(
      `chunk body at offset ${first!.end + 41} repeats the chunk body at offset ${bodies[0]!.at}: its ${firstMessages} messages skipped`,
    ),
  );
  // Many copies make one line, not one each: a count, the first and last offsets, and every message they held.
  const many = join(dir, 'many.record');
  writeFileSync(many, Buffer.concat([original.subarray(0, first!.end), firstPair, firstPair, firstPair]));
  const manyRead = await readAll(many, { tryToFix: true });
  const manyProblem = problemOf(manyRead.reader);
  manyRead.reader.close();
  assert.equal(manyRead.frames.length, firstMessages);
  const copies = [1, 2, 3].map((k) => first!.end + k * firstPair.length - (firstPair.length - 41));
  assert.match(
    manyProblem,
    new RegExp(
      `^[^;]*; 3 chunk bodies repeat earlier chunk bodies byte for byte \\(offsets ${copies[0]} … ${copies[2]}; the first repeats the chunk body at offset ${bodies[0]!.at}\\): their ${3 * firstMessages} messages skipped$`,
    ),
  );
  // The second chunk without its header: its body's messages are counted as skipped, never read under another header.
  const headless = join(dir, 'headless.record');
  writeFileSync(
    headless,
    Buffer.concat([original.subarray(0, first!.end), original.subarray(bodies[1]!.at, second!.end)]),
  );
  const cut = await readAll(headless, { tryToFix: true });
  const headlessProblem = problemOf(cut.reader);
  cut.reader.close();
  assert.equal(cut.frames.length, firstMessages);
  assert.match(
    headlessProblem,
    new RegExp(`chunk body at offset ${first!.end} has no chunk header before it: its \\d+ messages skipped`),
  );
});

async function messagesOfFirstChunk(): Promise<number> {
  const path = join(dir, 'first-chunk.record');
  writeFileSync(path, original.subarray(0, bodies[0]!.at + bodies[0]!.length));
  const { reader, frames } = await readAll(path, { tryToFix: true });
  reader.close();
  assert.ok(frames.length > 0);
  return frames.length;
}

function problemOf(reader: {
  getInfo(): { metadata?: Array<{ name: string; values: Record<string, string> }> };
}): string {
  return reader.getInfo().metadata?.find((m) => m.name === 'record.header')?.values['problem'] ?? '';
}

test('a record with another appended: CORRUPT_FILE naming the bytes after the index; tryToFix reads the first', async () => {
  // Found by hand: `cat a.record a.record` read as one record, complete, without a word of the second.
  const path = join(dir, 'twice.record');
  writeFileSync(path, Buffer.concat([original, original]));
  const error = await failure(path, false);
  assert.equal(error.code, 'CORRUPT_FILE');
  assert.ok(
    error.message.startsWith(`${original.length} bytes follow the index section, which no reader of the format reads`),
    error.message,
  );
  const { reader, frames } = await readAll(path, { tryToFix: true });
  const complete = reader.getInfo().hasCompleted;
  reader.close();
  assert.equal(frames.length, 64);
  assert.equal(complete, false);
});
