import { ActionType, SchemaType, type Frame } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';

/**
 * The deterministic recording the crash tests push and check: frame `seq` has a size and bytes that depend on `seq`
 * only (`patternBytes`, with `seq` in its first four bytes), so a reader can tell which frame it got and whether every
 * byte of it survived.
 */
export function crashFrameSize(seq: number): number {
  return 8 + ((Math.imul(seq + 1, 2654435761) >>> 0) % 600);
}

export function crashPayload(seq: number): Uint8Array {
  const data = patternBytes(crashFrameSize(seq), seq);
  new DataView(data.buffer).setUint32(0, seq, true);
  return data;
}

export const CRASH_URLS = ['dds://crash/a', 'dds://crash/b', 'dds://crash/c'] as const;

export function crashFrame(seq: number): Frame {
  return {
    timestamp: seq * 10,
    url: CRASH_URLS[seq % CRASH_URLS.length]!,
    data: crashPayload(seq),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
}

/** Why a frame read back is not frame `seq` as pushed, or undefined when it is, byte for byte. */
export function frameMismatch(frame: Frame, seq: number): string | undefined {
  const want = crashFrame(seq);
  if (frame.url !== want.url) return `frame ${seq}: url ${frame.url}, pushed ${want.url}`;
  if (frame.timestamp !== want.timestamp) return `frame ${seq}: timestamp ${frame.timestamp}, pushed ${want.timestamp}`;
  const a = frame.data;
  const b = want.data;
  if (a.length !== b.length) return `frame ${seq}: ${a.length} bytes, pushed ${b.length}`;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `frame ${seq}: byte ${i} is ${a[i]}, pushed ${b[i]}`;
  return undefined;
}
