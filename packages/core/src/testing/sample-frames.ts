import { ActionType } from '../model/action-type.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';

/** A deterministic byte pattern so tests (and other runtimes) can rebuild exactly what was written. */
export function patternBytes(length: number, seed: number): Uint8Array {
  return xorshiftBytes(length, seed, true);
}

/** Deterministic bytes no compressor can shrink (for chunks that must stay uncompressed). */
export function noiseBytes(length: number, seed: number): Uint8Array {
  return xorshiftBytes(length, seed, false);
}

function xorshiftBytes(length: number, seed: number, blocky: boolean): Uint8Array {
  const out = new Uint8Array(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    // Low entropy every other block so compressing backends really compress some payloads.
    out[i] = !blocky || (i >> 6) % 2 === 0 ? x & 0xff : i & 0x0f;
  }
  return out;
}

export const SAMPLE_PROTO_SCHEMA: SchemaData = {
  name: 'pb.Image',
  encoding: 'protobuf',
  schemaType: SchemaType.Protobuf,
  data: patternBytes(48, 99),
};

/**
 * A small recording covering the shapes the formats care about: several urls, Pub/Sub/Set/Get and an RPC url with
 * `Req|Resp`, raw/protobuf families, empty, tiny, compressible and 1 MiB payloads, unicode urls. Timestamps are
 * strictly increasing µs.
 */
export function sampleFrames(count = 240): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 6;
    const timestamp = 1000 + i * 10_000;
    let frame: Frame;
    if (kind === 0) {
      frame = {
        timestamp,
        url: 'dds://camera/front',
        data: patternBytes(300 + (i % 7) * 50, i),
        serType: 'pb.Image',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.Publish,
      };
    } else if (kind === 1) {
      frame = {
        timestamp,
        url: 'dds://imu',
        data: patternBytes(64, i),
        serType: 'json',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      };
    } else if (kind === 2) {
      frame = {
        timestamp,
        url: 'shm://lidar/点云',
        data: patternBytes(i === 2 ? 1024 * 1024 : 2048, i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Subscribe,
      };
    } else if (kind === 3) {
      frame = {
        timestamp,
        url: 'dds://planner/method',
        data: patternBytes(i % 12 === 3 ? 0 : 16, i),
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: i % 12 === 3 ? ActionType.ClientRequest : ActionType.ClientResponse,
      };
    } else if (kind === 4) {
      frame = {
        timestamp,
        url: 'dds://config/field',
        data: patternBytes(8, i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: i % 2 === 0 ? ActionType.Set : ActionType.Get,
      };
    } else {
      frame = {
        timestamp,
        url: 'dds://imu',
        data: new Uint8Array(0),
        serType: 'json',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      };
    }
    frames.push(frame);
  }
  return frames;
}
