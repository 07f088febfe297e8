import { fieldSize, type MessageDefinition, parseBasicFieldValue, parseMessageDefinition } from '@foxglove/ulog';
import type { MessageDecoder } from './ros.js';

type UlogValue = ReturnType<typeof parseBasicFieldValue> | UlogObject | UlogObject[];
interface UlogObject {
  [field: string]: UlogValue;
}

/**
 * PX4 ULog samples (the `D` payload without its message id, as @vlink/bag-interop's reader gives it) through the
 * schema the reader stores: the message's format line and those of the nested types it uses, one per line. Decoded
 * with `@foxglove/ulog`'s definition parser and scalar reader: fields by name, nested formats as objects, arrays as
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
    decode: (data) => decodeFields(top, definitions, new DataView(data.buffer, data.byteOffset, data.byteLength), 0),
  };
}

/**
 * The fields of one (possibly nested) format. Not `@foxglove/ulog`'s `parseMessage`: that one throws when a format
 * has no `timestamp` field, and the ULog format only requires it of logged topics: a nested type without one
 * (e.g. `inner:uint16_t a;` used as `inner[3] in;`) is valid, and pyulog reads it.
 */
function decodeFields(
  definition: MessageDefinition,
  definitions: Map<string, MessageDefinition>,
  view: DataView,
  offset: number,
): UlogObject {
  const output: UlogObject = {};
  let at = offset;
  for (const field of definition.fields) {
    const size = fieldSize(field, definitions);
    if (!field.name.startsWith('_')) {
      if (!field.isComplex) output[field.name] = parseBasicFieldValue(field, view, at);
      else {
        // fieldSize above has already refused a type the schema lacks ("Unknown type …")
        const nested = definitions.get(field.type) as MessageDefinition;
        output[field.name] =
          field.arrayLength === undefined
            ? decodeFields(nested, definitions, view, at)
            : Array.from({ length: field.arrayLength }, (_, i) =>
                decodeFields(nested, definitions, view, at + i * size),
              );
      }
    }
    at += size * (field.arrayLength ?? 1);
  }
  return output;
}
