import { ActionType, resolveWriterConfig, SchemaType } from '@vlink/bag-core';
import type { Frame, Info, RecordingContext, WriterConfig } from '@vlink/bag-core';
import { createTestContext, patternBytes, SAMPLE_PROTO_SCHEMA, writeFrame } from '@vlink/bag-core/testing';
import { McapIndexedReader, McapStreamReader } from '@mcap/core';
import type { McapTypes } from '@mcap/core';
import { loadCodecs, type Codecs } from '../codecs.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { MemoryWritable } from '../io/memory-writable.js';
import type { SidecarFacts } from '../maintenance/sidecar-facts.js';
import { VcapFileWriter } from './vcap-file-writer.js';
import { VcapReader } from './vcap-reader.js';

// Test-only helpers (the `*.test.*` name keeps them out of the published package).

export const FB_SCHEMA = {
  name: 'fb.Pose',
  encoding: '',
  schemaType: SchemaType.Flatbuffers,
  data: patternBytes(40, 5),
};
export const RPC_REQ = {
  name: 'pb.Req',
  encoding: 'protobuf',
  schemaType: SchemaType.Protobuf,
  data: patternBytes(20, 6),
};
export const RPC_RESP = {
  name: 'pb.Resp',
  encoding: 'protobuf',
  schemaType: SchemaType.Protobuf,
  data: patternBytes(24, 7),
};

/** The summary sidecar a writer leaves beside a file whose Info is `info` (the facts a repair may take from it). */
export function sidecarOf(info: Info): SidecarFacts {
  return {
    startTimestamp: info.startTimestamp,
    blankDuration: info.blankDuration,
    totalDuration: info.totalDuration,
    messageCount: info.messageCount,
    tagName: info.tagName,
    processName: info.processName,
    timezone: info.timezone,
    dateTime: info.dateTime,
  };
}

export function testContext(overrides: Parameters<typeof createTestContext>[0] = {}): RecordingContext {
  return createTestContext({ schemas: [SAMPLE_PROTO_SCHEMA, FB_SCHEMA, RPC_REQ, RPC_RESP], ...overrides });
}

/** Writes frames into memory with the VLink mapping; returns the file bytes. */
export async function recordToBytes(
  frames: Frame[],
  config: Partial<WriterConfig> = {},
  context: RecordingContext = testContext(),
  during?: (writer: VcapFileWriter) => void,
): Promise<Uint8Array> {
  const writable = new MemoryWritable();
  const writer = new VcapFileWriter({
    writable,
    codecs: await loadCodecs(),
    config: resolveWriterConfig(config),
    context,
    file: 'mem.vcap',
  });
  for (const f of frames) writeFrame(writer, f);
  during?.(writer);
  writer.close();
  return writable.bytes();
}

export async function openBytes(bytes: Uint8Array, tryToFix = false, name = 'mem.vcap'): Promise<VcapReader> {
  return VcapReader.open(name, { readOnly: true, tryToFix }, await loadCodecs(), new MemoryReadable(bytes, name));
}

export function readFrames(reader: VcapReader, query = {}): Frame[] {
  // The reader reuses its frame object: copy each one as it comes.
  const out: Frame[] = [];
  for (const f of reader.frames(query)) out.push({ ...f, data: f.data.slice() });
  return out;
}

/** `@mcap/core` decompress handlers backed by our codec map. */
export async function mcapHandlers(): Promise<Record<string, (b: Uint8Array, size: bigint) => Uint8Array>> {
  const codecs: Codecs = await loadCodecs();
  return Object.fromEntries(
    Object.entries(codecs).map(([name, c]) => [name, (b: Uint8Array, size: bigint) => c.decompress(b, Number(size))]),
  );
}

export async function mcapIndexed(bytes: Uint8Array): Promise<McapIndexedReader> {
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset: bigint, length: bigint) => bytes.slice(Number(offset), Number(offset + length)),
  };
  return McapIndexedReader.Initialize({ readable, decompressHandlers: await mcapHandlers() });
}

/** Every record of the file through `@mcap/core`'s streaming reader with CRC validation on. */
export async function mcapStream(bytes: Uint8Array): Promise<McapTypes.TypedMcapRecord[]> {
  const reader = new McapStreamReader({
    validateCrcs: true,
    includeChunks: true,
    decompressHandlers: await mcapHandlers(),
  });
  reader.append(bytes);
  const out: McapTypes.TypedMcapRecord[] = [];
  for (let r = reader.nextRecord(); r; r = reader.nextRecord()) out.push(r);
  if (!reader.done()) throw new Error('stream reader did not reach the end');
  return out;
}

/** A mixed recording: protobuf, flatbuffers, raw, RPC halves, Set/Get, an unknown-family url. */
export function mixedFrames(count = 60, bigEvery = 0): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < count; i++) {
    const timestamp = 500 + i * 1_000;
    const k = i % 6;
    const big = bigEvery > 0 && i % bigEvery === 0;
    if (k === 0)
      frames.push({
        timestamp,
        url: 'dds://camera',
        data: patternBytes(big ? 300_000 : 200, i),
        serType: 'pb.Image',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.Publish,
      });
    else if (k === 1)
      frames.push({
        timestamp,
        url: 'dds://pose',
        data: patternBytes(32, i),
        serType: 'fb.Pose',
        schemaType: SchemaType.Flatbuffers,
        actionType: ActionType.Subscribe,
      });
    else if (k === 2)
      frames.push({
        timestamp,
        url: 'dds://imu',
        data: patternBytes(64, i),
        serType: 'json',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
    else if (k === 3)
      frames.push({
        timestamp,
        url: 'dds://svc',
        data: patternBytes(16, i),
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: i % 12 === 3 ? ActionType.ClientRequest : ActionType.ClientResponse,
      });
    else if (k === 4)
      frames.push({
        timestamp,
        url: 'dds://param',
        data: patternBytes(8, i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: Math.floor(i / 6) % 2 ? ActionType.Set : ActionType.Get,
      });
    else
      frames.push({
        timestamp,
        url: 'dds://blob',
        data: patternBytes(12, i),
        serType: '',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.Publish,
      });
  }
  return frames;
}
