import { create, createFileRegistry, toBinary } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from '@bufbuild/protobuf/wkt';
import { parse } from '@foxglove/rosmsg';
import { MessageWriter as CdrWriter } from '@foxglove/rosmsg2-serialization';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ActionType, BagWriter, type Frame, SchemaType } from '@vlink/bag';

/** 23:59:59.990 UTC: the messages of the test bags cross midnight, so each url spans two date partitions. */
export const START_MS = Date.UTC(2026, 2, 14, 23, 59, 59, 990);

/** Urls with `/`, `:`, `%`, `=`, spaces, quotes and non-ASCII, to check the partition encoding. */
export const URLS = {
  protobuf: 'dds://robot/pose',
  json: "json:/odd url%=ä/'x'*",
  cdr: '/ros2/thing',
  raw: 'raw.bytes',
} as const;

const { DOUBLE, STRING, INT32 } = FieldDescriptorProto_Type;
const fileSet = create(FileDescriptorSetSchema, {
  file: [
    create(FileDescriptorProtoSchema, {
      name: 'test/pose.proto',
      package: 'test',
      syntax: 'proto3',
      messageType: [
        {
          name: 'Pose',
          field: [
            { name: 'x', number: 1, type: DOUBLE, label: FieldDescriptorProto_Label.OPTIONAL },
            { name: 'label', number: 2, type: STRING, label: FieldDescriptorProto_Label.OPTIONAL },
            { name: 'count', number: 3, type: INT32, label: FieldDescriptorProto_Label.OPTIONAL },
          ],
        },
      ],
    }),
  ],
});
const Pose = createFileRegistry(fileSet).getMessage('test.Pose')!;
const ROS2_DEF = 'float64 speed\nstring name\nint32[] samples\n';
const cdr = new CdrWriter(parse(ROS2_DEF, { ros2: true }));
const utf8 = (text: string) => new TextEncoder().encode(text);

/** A frame the test pushed, with the decoded value it expects in `data` (undefined: no `data`). */
export interface PushedFrame {
  frame: Frame;
  data: Record<string, unknown> | undefined;
  /** The payload does not fit its schema: exported with `data` NULL and counted. */
  corrupt?: boolean;
}

/** `count` messages round-robin over the four urls, 1 ms apart; the 7th protobuf payload is corrupt. */
export function exportFrames(count: number): PushedFrame[] {
  const out: PushedFrame[] = [];
  for (let i = 0; i < count; i++) {
    const timestamp = i * 1000;
    const publishTime = timestamp - 250 - i;
    const base = { timestamp, publishTime, actionType: ActionType.Publish };
    switch (i % 4) {
      case 0: {
        const value = { x: i + 0.25, label: `p${i}`, count: i };
        const corrupt = i === 24;
        out.push({
          frame: {
            ...base,
            url: URLS.protobuf,
            serType: 'test.Pose',
            schemaType: SchemaType.Protobuf,
            data: corrupt ? new Uint8Array([0x0a, 0xff, 0xff]) : toBinary(Pose, create(Pose, value)),
          },
          data: corrupt ? undefined : value,
          ...(corrupt ? { corrupt } : {}),
        });
        break;
      }
      case 1: {
        const value = { n: i, ok: i % 3 === 0, nested: { s: `s${i}` } };
        out.push({
          frame: {
            ...base,
            url: URLS.json,
            serType: 'json',
            schemaType: SchemaType.Raw,
            data: utf8(JSON.stringify(value)),
          },
          data: value,
        });
        break;
      }
      case 2: {
        const value = { speed: i / 8, name: `t${i}`, samples: [i, i + 1, -i] };
        out.push({
          frame: {
            ...base,
            url: URLS.cdr,
            serType: 'pkg/msg/Thing',
            schemaType: SchemaType.Cdr,
            data: cdr.writeMessage({ ...value, samples: new Int32Array(value.samples) }),
          },
          data: value,
        });
        break;
      }
      default: {
        const data = new Uint8Array(10 + (i % 7));
        for (let k = 0; k < data.length; k++) data[k] = (k * 37 + i) & 0xff;
        out.push({
          frame: { ...base, url: URLS.raw, serType: 'raw', schemaType: SchemaType.Raw, data },
          data: undefined,
        });
      }
    }
  }
  return out;
}

/** Writes the frames, with the protobuf and ros2msg schemas, to `path` (any of the four formats). */
export async function writeExportBag(path: string, frames: readonly PushedFrame[]): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: START_MS });
  writer.pushSchema({
    name: 'test.Pose',
    encoding: 'protobuf',
    schemaType: SchemaType.Protobuf,
    data: toBinary(FileDescriptorSetSchema, fileSet),
  });
  writer.pushSchema({ name: 'pkg/msg/Thing', encoding: 'ros2msg', schemaType: SchemaType.Cdr, data: utf8(ROS2_DEF) });
  for (const { frame } of frames) {
    if (writer.push(frame) < 0) throw new Error(`frame refused: ${writer.stats().lastError?.message}`);
  }
  await writer.close();
}

/** JSON payloads of url `/j`, 1 ms apart (their expected `data` left to the test). */
export function jsonFrames(payloads: readonly Uint8Array[]): PushedFrame[] {
  return payloads.map((data, i) => ({
    frame: {
      timestamp: i * 1000,
      publishTime: i * 1000,
      url: '/j',
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
      data,
    },
    data: undefined,
  }));
}

/**
 * Rows of an export read back with DuckDB over all its part files (hive partitions, union_by_name), in (bag_id, seq)
 * order: `columns` is a SELECT list over the `messages` columns.
 */
export async function exportedRows(outDir: string, columns = 'bag_id, seq, url'): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const glob = join(outDir, 'messages', '**', '*.parquet').replaceAll("'", "''");
    const result = await connection.runAndReadAll(
      `SELECT ${columns} FROM read_parquet('${glob}', hive_partitioning = true, union_by_name = true, ` +
        'hive_types_autocast = false) ORDER BY bag_id, seq',
    );
    return result.getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
