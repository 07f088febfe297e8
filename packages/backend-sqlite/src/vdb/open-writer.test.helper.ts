import {
  type Frame,
  type RecordingContext,
  resolveWriterConfig,
  type SchemaData,
  SchemaType,
  type WriterConfig,
} from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import type { SqliteDriver } from '../driver/driver.js';
import { pattern, type tempDir } from '../testing/util.js';
import { type VdbFileOptions, VdbFileWriter } from './file-writer.js';
import { VdbRecording } from './recording.js';

export interface OpenWriterOptions extends VdbFileOptions {
  /** The file (default: a new name in the test file's temp dir). */
  path?: string;
  /** The recording-wide state (default: a new one, as the backend makes for a single file). */
  recording?: VdbRecording;
  /** The recording context (default: `createTestContext({ schemas })`). */
  context?: RecordingContext;
  /** Schemas the default context resolves. */
  schemas?: SchemaData[];
}

/** The protobuf schemas the writer tests name: an image, an RPC request and its response. */
export const PROTO = { name: 'pb.Image', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: pattern(40, 3) };
export const REQ = { name: 'pb.Req', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: pattern(20, 5) };
export const RESP = { name: 'pb.Resp', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: pattern(24, 7) };

/**
 * A `.vdb` file writer opened as the backend opens one (resolved config, a recording, a context), on a fresh file of
 * the test file's temp dir: the setup the `.vdb` writer tests share.
 */
export function openWriter(
  driver: SqliteDriver,
  tmp: ReturnType<typeof tempDir>,
  config: Partial<WriterConfig> = {},
  options: OpenWriterOptions = {},
): { path: string; writer: VdbFileWriter; recording: VdbRecording; context: RecordingContext } {
  const path = options.path ?? tmp.path('w.vdb');
  const resolved = resolveWriterConfig(config);
  const recording = options.recording ?? new VdbRecording(resolved);
  const context = options.context ?? createTestContext(options.schemas ? { schemas: options.schemas } : {});
  const writer = VdbFileWriter.open(driver, path, resolved, context, recording, options);
  return { path, writer, recording, context };
}

/** Writes `frames` to a new file and closes it. */
export function recordFrames(
  driver: SqliteDriver,
  tmp: ReturnType<typeof tempDir>,
  frames: readonly Frame[],
  config: Partial<WriterConfig> = {},
): { path: string; recording: VdbRecording } {
  const { path, writer, recording } = openWriter(driver, tmp, config);
  for (const frame of frames) writeFrame(writer, frame);
  writer.close();
  return { path, recording };
}
