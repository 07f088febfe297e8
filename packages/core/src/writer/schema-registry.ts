import { BagError } from '../errors.js';
import type { SchemaData } from '../model/frame.js';
import { schemaTypeLabel, type SchemaType } from '../model/schema-type.js';
import { schemaKey } from '../model/url-identity.js';

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
    if (!schema.name) throw new BagError('INVALID_ARGUMENT', 'schema name must not be empty');
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

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
