import { ActionType, type Frame, SchemaType } from '@vlink/bag-core';

/**
 * Builds a reader over a file it has just opened: when building throws (a damaged or foreign file), the file is closed
 * again before the error goes on, so a failed open leaves no handle behind.
 */
export function closingOnError<T>(file: { close(): void }, build: () => T): T {
  try {
    return build();
  } catch (error) {
    file.close();
    throw error;
  }
}

/**
 * The one frame object a reader's iterator fills in and yields again for every message (consumers copy what they keep,
 * as `BackendReader.frames` says). A reader that sets `publishTime` or `sequence` passes them in `init`, so every field
 * is present from the start and the object's shape never changes in the hot loop.
 */
export function reusableFrame(init: Partial<Frame> = {}): Frame {
  return {
    timestamp: 0,
    url: '',
    data: new Uint8Array(0),
    serType: '',
    schemaType: SchemaType.Unknown,
    actionType: ActionType.Publish,
    ...init,
  };
}
