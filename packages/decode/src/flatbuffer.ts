import { ByteBuffer } from 'flatbuffers';
import { BaseType, Parser, Schema, Table } from './flatbuffers-reflection.js';
import type { MessageDecoder } from './ros.js';

/**
 * Flatbuffers payloads through their embedded binary schema (`bfbs`, what `flatc --binary --schema` writes and what
 * VLink and MCAP store), by `flatbuffers_reflection` — the reflection library Foxglove Studio decodes flatbuffers
 * with. The type is looked up by its fully qualified name among the schema's objects, else the schema's root table
 * is taken. What that library reads: scalars, strings, tables, structs and vectors of them. Enum values are written
 * by name, as `flatc --json` writes them (a value without a name, and `bit_flags` enums, stay numbers);
 * unions and fixed-size arrays are refused when the decoder is built (it says which field), as are schemas whose
 * types contain themselves (the library builds every nested reader up front).
 *
 * Payloads are bounds-checked by the library (a table, vtable or scalar outside the buffer throws), so a damaged
 * payload is an error of that frame, never a read outside it; vector lengths are checked here ({@link CheckedBuffer}).
 */
export function flatbufferDecoder(type: string, bfbs: Uint8Array): MessageDecoder {
  // The schema's vectors are checked too: a damaged field or object count made the reflection library loop over
  // billions of zeros read past the schema (found by fuzzing the schemas of a flatbuffers MCAP: the decoder hung).
  const schema = Schema.getRootAsSchema(new CheckedBuffer(bfbs));
  const typeIndex = objectIndex(schema, type);
  const object = schema.objects(typeIndex);
  if (object?.isStruct()) throw new Error(`${type} is a struct; a payload's root must be a table`);
  let toObject: (table: Table) => Record<string, unknown>;
  try {
    toObject = new Parser(schema).toObjectLambda(typeIndex, false);
  } catch (error) {
    if (error instanceof RangeError)
      throw new Error(`${type} contains itself, which the reflection reader cannot read`);
    throw error;
  }
  const nameEnums = enumNamer(schema, typeIndex, new Map());
  return {
    decode(data) {
      const buffer = new CheckedBuffer(data);
      if (data.length < 4) throw new Error(`${data.length} bytes cannot hold a flatbuffer (its root offset is 4)`);
      const value = toObject(new Table(buffer, typeIndex, buffer.readUint32(0), false));
      nameEnums?.(value);
      return value;
    },
  };
}

/**
 * A ByteBuffer whose vectors cannot claim more elements than bytes follow them. The reflection library trusts a
 * vector's length: a vector of strings loops over it, and past the buffer `flatbuffers` reads zeros instead of
 * throwing, so one flipped length byte (found by fuzzing: 169 million elements) grew an array until V8 aborted the
 * whole process, which no try/catch can stop. Every element takes at least one byte, so this bound never refuses a
 * well-formed buffer.
 */
class CheckedBuffer extends ByteBuffer {
  override __vector_len(offset: number): number {
    const length = super.__vector_len(offset);
    const start = this.__vector(offset);
    if (start < 0 || length > this.capacity() - start)
      throw new RangeError(`a vector of ${length} elements at ${start} runs past the ${this.capacity()}-byte buffer`);
    return length;
  }
}

type Namer = (value: Record<string, unknown>) => void;

/**
 * Replaces the enum numbers of an object of type `typeIndex` (and of the objects in it) by their names, in place;
 * undefined when the type holds no enum. `done` breaks cycles (a type whose namer is being built names nothing).
 */
function enumNamer(schema: Schema, typeIndex: number, done: Map<number, Namer | undefined>): Namer | undefined {
  if (done.has(typeIndex)) return done.get(typeIndex);
  done.set(typeIndex, undefined);
  const steps: Namer[] = [];
  const object = schema.objects(typeIndex);
  for (let i = 0; i < (object?.fieldsLength() ?? 0); i++) {
    const field = object!.fields(i);
    const type = field?.type();
    const name = field?.name();
    if (!type || !name) continue;
    const base = type.baseType();
    const element = base === BaseType.Vector ? type.element() : base;
    if (element === BaseType.Obj) {
      const inner = enumNamer(schema, type.index(), done);
      if (!inner) continue;
      steps.push((value) => {
        const item = value[name];
        if (Array.isArray(item)) for (const one of item) inner(one as Record<string, unknown>);
        else if (item && typeof item === 'object') inner(item as Record<string, unknown>);
      });
    } else if (element >= BaseType.UType && element <= BaseType.ULong && type.index() >= 0) {
      const names = enumNames(schema, type.index());
      if (!names) continue;
      const named = (n: unknown) => names.get(typeof n === 'bigint' ? n : BigInt(Number(n))) ?? n;
      steps.push((value) => {
        const item = value[name];
        if (item === undefined) return;
        value[name] =
          ArrayBuffer.isView(item) || Array.isArray(item) ? Array.from(item as ArrayLike<unknown>, named) : named(item);
      });
    }
  }
  const namer: Namer | undefined =
    steps.length === 0
      ? undefined
      : (value) => {
          for (const step of steps) step(value);
        };
  done.set(typeIndex, namer);
  return namer;
}

/** Value → name of enum `index`; undefined for `bit_flags` enums (flatc writes those as lists of names). */
function enumNames(schema: Schema, index: number): Map<bigint, string> | undefined {
  const definition = schema.enums(index);
  if (!definition) return undefined;
  for (let i = 0; i < definition.attributesLength(); i++)
    if (definition.attributes(i)?.key() === 'bit_flags') return undefined;
  const names = new Map<bigint, string>();
  for (let i = 0; i < definition.valuesLength(); i++) {
    const value = definition.values(i);
    const name = value?.name();
    if (value && name) names.set(BigInt(value.value()), name);
  }
  return names;
}

/**
 * The index of `type` among the schema's objects, else the schema's root table: the schema is stored under the
 * frame's type name, so its root is that type even when the two spell it differently (VLink sers without namespace).
 */
function objectIndex(schema: Schema, type: string): number {
  let root = -1;
  const rootName = schema.rootTable()?.name();
  for (let i = 0; i < schema.objectsLength(); i++) {
    const name = schema.objects(i)?.name();
    if (name === type) return i;
    if (name === rootName) root = i;
  }
  if (root >= 0) return root;
  throw new Error(`the schema has no table ${type} and no root table`);
}
