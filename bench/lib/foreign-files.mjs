// Writers of large foreign-format files for bench/interop.bench.mjs, made by repeating the messages of the committed
// fixtures (fixtures/foreign) with advancing times: ROS 1 bags (our own minimal v2.0 record writer, uncompressed or
// lz4 chunks), MCAP (@mcap/core's McapWriter, zstd chunks) and ULog (the fixture's definitions, then its samples
// repeated). Nothing here is published or committed; the files go to a temporary directory.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import zstd from '@foxglove/wasm-zstd';
import { McapWriter } from '@mcap/core';
import { compress as lz4Compress } from 'lz4js';

const enc = new TextEncoder();

function field(name, value) {
  const v = typeof value === 'string' ? enc.encode(value) : value;
  const out = new Uint8Array(4 + name.length + 1 + v.length);
  new DataView(out.buffer).setUint32(0, name.length + 1 + v.length, true);
  out.set(enc.encode(`${name}=`), 4);
  out.set(v, 4 + name.length + 1);
  return out;
}
const u32 = (n) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};
const u64 = (n) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
};
const time = (ns) => {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  v.setUint32(0, Number(ns / 1_000_000_000n), true);
  v.setUint32(4, Number(ns % 1_000_000_000n), true);
  return b;
};
const concat = (parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const record = (fields, data) => {
  const header = concat(fields);
  return concat([u32(header.length), header, u32(data.length), data]);
};

/**
 * A ROS 1 bag v2.0 of `count` messages cycling through `messages` ({ conn, time (ns bigint), data }), with
 * `connections` ({ id, topic, type, md5sum, definition }), chunks of about `chunkSize` bytes, compression `none`
 * or `lz4`. Returns the file size.
 */
export function writeRos1Bag(path, { connections, messages, count, periodNs, compression, chunkSize = 768 * 1024 }) {
  const fd = openSync(path, 'w');
  let pos = 0;
  const put = (bytes) => {
    writeSync(fd, bytes, 0, bytes.length, pos);
    pos += bytes.length;
  };
  put(enc.encode('#ROSBAG V2.0\n'));
  const headerAt = pos;
  put(new Uint8Array(4096 + 8)); // the bag header record, rewritten at the end
  const connectionRecord = (c) =>
    record(
      [field('op', new Uint8Array([7])), field('conn', u32(c.id)), field('topic', c.topic)],
      concat([
        field('topic', c.topic),
        field('type', c.type),
        field('md5sum', c.md5sum),
        field('message_definition', c.definition),
      ]),
    );
  const infos = [];
  let parts = connections.map(connectionRecord);
  let size = parts.reduce((n, p) => n + p.length, 0);
  let start;
  let end;
  const perConn = new Map();
  const flush = () => {
    if (perConn.size === 0) return;
    const raw = concat(parts);
    const data = compression === 'lz4' ? lz4Compress(raw) : raw;
    const at = pos;
    put(
      record(
        [field('op', new Uint8Array([5])), field('compression', compression), field('size', u32(raw.length))],
        data,
      ),
    );
    infos.push({ at, start, end, counts: new Map([...perConn].map(([k, v]) => [k, v.length])) });
    for (const [conn, entries] of perConn) {
      put(
        record(
          [
            field('op', new Uint8Array([4])),
            field('ver', u32(1)),
            field('conn', u32(conn)),
            field('count', u32(entries.length)),
          ],
          concat(entries.flatMap(([t, off]) => [time(t), u32(off)])),
        ),
      );
    }
    parts = [];
    size = 0;
    start = undefined;
    perConn.clear();
  };
  for (let i = 0; i < count; i++) {
    const m = messages[i % messages.length];
    const t = m.time + BigInt(Math.floor(i / messages.length)) * periodNs;
    const bytes = record(
      [field('op', new Uint8Array([2])), field('conn', u32(m.conn)), field('time', time(t))],
      m.data,
    );
    if (start === undefined) start = t;
    end = t;
    let entries = perConn.get(m.conn);
    if (!entries) perConn.set(m.conn, (entries = []));
    entries.push([t, size]);
    parts.push(bytes);
    size += bytes.length;
    if (size >= chunkSize) flush();
  }
  flush();
  const indexAt = pos;
  for (const c of connections) put(connectionRecord(c));
  for (const info of infos) {
    put(
      record(
        [
          field('op', new Uint8Array([6])),
          field('ver', u32(1)),
          field('chunk_pos', u64(info.at)),
          field('start_time', time(info.start)),
          field('end_time', time(info.end)),
          field('count', u32(info.counts.size)),
        ],
        concat([...info.counts].flatMap(([conn, n]) => [u32(conn), u32(n)])),
      ),
    );
  }
  const headerFields = concat([
    field('op', new Uint8Array([3])),
    field('index_pos', u64(indexAt)),
    field('conn_count', u32(connections.length)),
    field('chunk_count', u32(infos.length)),
  ]);
  const padding = 4096 - 4 - headerFields.length;
  const header = concat([u32(headerFields.length), headerFields, u32(padding), enc.encode(' '.repeat(padding))]);
  writeSync(fd, header, 0, header.length, headerAt);
  closeSync(fd);
  return pos;
}

/** An MCAP file (zstd chunks of 1 MiB, or none) of `count` messages cycling through `messages`. */
export async function writeMcap(path, { schemas, channels, messages, count, periodNs, compression }) {
  await zstd.isLoaded;
  const fd = openSync(path, 'w');
  let pos = 0n;
  const writable = {
    position: () => pos,
    write: async (bytes) => {
      writeSync(fd, bytes);
      pos += BigInt(bytes.length);
    },
  };
  const writer = new McapWriter({
    writable,
    chunkSize: 1024 * 1024,
    compressChunk:
      compression === 'zstd' ? (data) => ({ compression: 'zstd', compressedData: zstd.compress(data, 1) }) : undefined,
  });
  await writer.start({ profile: 'ros2', library: 'vlink-bag bench' });
  const schemaIds = new Map();
  for (const s of schemas)
    schemaIds.set(s.id, await writer.registerSchema({ name: s.name, encoding: s.encoding, data: s.data }));
  const channelIds = new Map();
  for (const c of channels)
    channelIds.set(
      c.id,
      await writer.registerChannel({
        topic: c.topic,
        schemaId: schemaIds.get(c.schemaId) ?? 0,
        messageEncoding: c.messageEncoding,
        metadata: new Map(),
      }),
    );
  for (let i = 0; i < count; i++) {
    const m = messages[i % messages.length];
    const t = m.logTime + BigInt(Math.floor(i / messages.length)) * periodNs;
    await writer.addMessage({
      channelId: channelIds.get(m.channelId),
      sequence: i,
      logTime: t,
      publishTime: t,
      data: m.data,
    });
  }
  await writer.end();
  closeSync(fd);
  return Number(pos);
}

/**
 * A ULog: the fixture's header and definitions section (everything before its first subscription), its
 * subscriptions, then its data messages repeated `rounds` times with timestamps shifted by `periodUs` a round.
 */
export function writeUlog(path, fixture, rounds, periodUs) {
  const bytes = readFileSync(fixture);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const messages = [];
  for (let at = 16; at + 3 <= bytes.length; ) {
    const size = view.getUint16(at, true);
    messages.push({ at, type: String.fromCharCode(bytes[at + 2]), bytes: bytes.subarray(at, at + 3 + size) });
    at += 3 + size;
  }
  const firstData = messages.findIndex((m) => m.type === 'A');
  const head = bytes.subarray(0, messages[firstData].at);
  const subscriptions = messages.filter((m) => m.type === 'A');
  // Timestamp offset 0: every format of the fixture starts with `uint64_t timestamp`.
  const samples = messages.filter((m) => m.type === 'D');
  const fd = openSync(path, 'w');
  writeSync(fd, head);
  for (const s of subscriptions) writeSync(fd, s.bytes);
  let total = head.length + subscriptions.reduce((n, s) => n + s.bytes.length, 0);
  const round = concat(samples.map((s) => s.bytes));
  const roundView = new DataView(round.buffer);
  const offsets = [];
  for (let at = 0, k = 0; k < samples.length; k++) {
    offsets.push(at + 5);
    at += samples[k].bytes.length;
  }
  const base = offsets.map((o) => roundView.getBigUint64(o, true));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < offsets.length; k++) roundView.setBigUint64(offsets[k], base[k] + BigInt(r * periodUs), true);
    writeSync(fd, round);
    total += round.length;
  }
  closeSync(fd);
  return total;
}
