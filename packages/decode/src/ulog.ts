import { type MessageDefinition, parseMessage, parseMessageDefinition } from '@foxglove/ulog';
import type { MessageDecoder } from './ros.js';

/**
 * PX4 ULog samples (the `D` payload without its message id, as @vlink/bag-interop's reader gives it) through the
 * schema the reader stores: the message's format line and those of the nested types it uses, one per line. Decoded
 * by `@foxglove/ulog`'s definition parser and field reader: fields by name, nested formats as objects, arrays as
 * arrays, `char[N]` as a string; `_padding` fields are left out.
 */
export function ulogDecoder(typeName: string, formats: string): MessageDecoder {
  const definitions = new Map<string, MessageDefinition>();
  for (const line of formats.split('\n')) {
    const definition = line.trim() === '' ? undefined : parseMessageDefinition(line);
    if (definition) definitions.set(definition.name, definition);
  }
  const top = definitions.get(typeName);
  if (!top) throw new Error(`the schema has no ULog format for ${typeName}`);
  return {
    decode: (data) => parseMessage(top, definitions, new DataView(data.buffer, data.byteOffset, data.byteLength)),
  };
}
