import { createHash } from 'node:crypto';
import { BagReader, type Frame, type ReaderOptions } from '@vlink/bag-core';

/** A frame as the tests compare it: its payload as SHA-256 (and kept, for decoding). */
export interface ReadFrame {
  url: string;
  timestamp: number;
  publishTime: number | undefined;
  sequence: number | undefined;
  serType: string;
  schemaType: number;
  actionType: number;
  size: number;
  sha256: string;
  data: Uint8Array;
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function snapshot(frame: Frame): ReadFrame {
  return {
    url: frame.url,
    timestamp: frame.timestamp,
    publishTime: frame.publishTime,
    sequence: frame.sequence,
    serType: frame.serType,
    schemaType: frame.schemaType,
    actionType: frame.actionType,
    size: frame.data.length,
    sha256: sha256(frame.data),
    data: frame.data.slice(),
  };
}

/** Opens a bag through the registry (as users do) and reads every frame with the async iterator. */
export async function readAll(
  path: string,
  options: ReaderOptions = {},
): Promise<{ reader: BagReader; frames: ReadFrame[] }> {
  const reader = await BagReader.create(path, options);
  const frames: ReadFrame[] = [];
  try {
    for await (const frame of reader.frames()) frames.push(snapshot(frame));
  } catch (error) {
    reader.close();
    throw error;
  }
  return { reader, frames };
}
