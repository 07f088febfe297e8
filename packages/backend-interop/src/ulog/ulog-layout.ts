import { fieldSize, type MessageDefinition } from '@foxglove/ulog';

/** Where a topic's samples keep their time, and the sizes a sample of its format may have. */
export interface SampleLayout {
  /** Offset of the `uint64_t timestamp` field in a sample. */
  timestampOffset: number;
  /** The format's size without its trailing top-level `_padding` fields: what PX4's logger writes. */
  minSize: number;
  /** With them: a writer may keep them. Outside [minSize, maxSize] a sample is damage (pyulog's rule too). */
  maxSize: number;
}

/** The layout of `definition`'s samples; undefined without a `uint64_t timestamp` field. Throws for a bad format. */
export function sampleLayout(
  definition: MessageDefinition,
  definitions: Map<string, MessageDefinition>,
): SampleLayout | undefined {
  let timestampOffset = -1;
  let size = 0;
  let padding = 0;
  for (const field of definition.fields) {
    if (timestampOffset < 0 && field.name === 'timestamp' && field.type === 'uint64_t' && !field.arrayLength)
      timestampOffset = size;
    const bytes = fieldSize(field, definitions) * (field.arrayLength ?? 1);
    size += bytes;
    padding = field.name.startsWith('_padding') ? padding + bytes : 0;
  }
  return timestampOffset < 0 ? undefined : { timestampOffset, minSize: size - padding, maxSize: size };
}
