import { BagError } from '../errors.js';
import type { SchemaData } from '../model/frame.js';
import { schemaTypeLabel, type SchemaType } from '../model/schema-type.js';
import { schemaKey, storableName } from '../model/url-identity.js';

/** Asked for a schema the recording does not know yet (VLink `SchemaCallback(ser_type, schema_type)`). */
export type SchemaCallback = (name: string, schemaType: SchemaType) => SchemaData | undefined | null;

/**
 * The recording-wide schema cache: `pushSchema` fills it, backends ask it through `RecordingContext.resolveSchema`,
 * and a registered callback answers what the cache does not know (format reference §2.5, sources tried in that order).
 */
export class SchemaRegistry {
  private readonly byKey = new Map<string, SchemaData>();
  private callback: SchemaCallback | undefined;

  setCallback(callback: SchemaCallback | undefined): void {
    this.callback = callback;
  }

  /** Adds a schema; a different encoding/data for a known (name, family) is a `SCHEMA_CONFLICT`. */
  add(schema: SchemaData): SchemaData {
    const problem = schemaProblem(schema);
    if (problem) throw new BagError('INVALID_ARGUMENT', problem);
    const normalised: SchemaData = {
      ...schema,
      encoding: schema.encoding || schemaTypeLabel(schema.schemaType),
    };
    const key = schemaKey(schema.name, schema.schemaType);
    const known = this.byKey.get(key);
    if (known) {
      if (known.encoding !== normalised.encoding || !sameBytes(known.data, normalised.data)) {
        throw new BagError('SCHEMA_CONFLICT', `schema "${schema.name}" was already pushed with other content`);
      }
      return known;
    }
    // Keep a private copy: the caller may reuse its buffer, and the schema may be written much later.
    const stored = { ...normalised, data: normalised.data.slice() };
    this.byKey.set(key, stored);
    return stored;
  }

  resolve(name: string, schemaType: SchemaType): SchemaData | undefined {
    const key = schemaKey(name, schemaType);
    const known = this.byKey.get(key);
    if (known) return known;
    const fromCallback = this.callback?.(name, schemaType);
    if (!fromCallback || fromCallback.data.length === 0) return undefined;
    return this.add({ ...fromCallback, name, schemaType });
  }
}

/**
 * What is wrong with a schema as plain JavaScript can pass it: a string `data` was stored as text, a schema without a
 * number `schemaType` was kept under a key no frame's family finds, a `null` threw a TypeError reported as a conflict.
 */
function schemaProblem(schema: SchemaData): string | undefined {
  if (typeof schema !== 'object' || schema === null) return 'a schema must be an object';
  if (typeof schema.name !== 'string' || schema.name === '') return 'schema name must not be empty';
  if (storableName(schema.name) !== schema.name) return 'schema name is not well-formed Unicode (a lone surrogate)';
  if (!(schema.data instanceof Uint8Array)) return `schema "${schema.name}": data must be a Uint8Array`;
  if (typeof schema.schemaType !== 'number') return `schema "${schema.name}": schemaType must be a number`;
  if (schema.encoding !== undefined && typeof schema.encoding !== 'string')
    return `schema "${schema.name}": encoding must be a string`;
  return undefined;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
