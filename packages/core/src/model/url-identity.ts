import { BagError } from '../errors.js';
import { type ActionType, isRpcAction, serForAction } from './action-type.js';
import type { SchemaData } from './frame.js';
import { resolveSchemaType, SchemaType, schemaTypeLabel } from './schema-type.js';

/*
 * What a url is for a whole recording (format reference §2.5, §2.6, §10.1): its ser and its family, and the key its
 * schemas are stored under. One module for every writer (`.vdb`, `.vcap`, `.vcapx`) and the worker's schema table,
 * so a conflict is found, and worded, the same way in every format. `.vdb` keys a url by its name (an RPC url's ser is
 * `Req|Resp`); the MCAP-based formats key it by url + action, each action with its half of the ser.
 */

/** Where a conflicting frame was going, for the error. */
export interface UrlPlace {
  file?: string;
  url: string;
}

/**
 * Throws `INVALID_ARGUMENT` when a url or ser, met by a writer for the first time, is not well-formed Unicode (it
 * holds a lone surrogate). Every format stores names as UTF-8, where a lone surrogate becomes U+FFFD: the frames were
 * stored under another url than the one pushed, and a split recording's manifest (JSON, which escapes the surrogate)
 * and its segments then disagreed, so the recording did not open. Checked where a backend first meets a url or a
 * ser, so frames after the first pay nothing.
 */
export function checkStorableNames(url: string, ser: string, place: UrlPlace): void {
  const error = unstorableNames(url, ser, place);
  if (error) throw error;
}

/** What `checkStorableNames` throws, returned instead (undefined when both names can be stored). */
export function unstorableNames(url: string, ser: string, place: UrlPlace): BagError | undefined {
  const which = !isWellFormed(url) ? 'url' : !isWellFormed(ser) ? 'ser type' : undefined;
  if (which === undefined) return undefined;
  return new BagError(
    'INVALID_ARGUMENT',
    `${which} is not well-formed Unicode (a lone surrogate): UTF-8 cannot store it`,
    place,
  );
}

/** The name as UTF-8 stores it (each lone surrogate as U+FFFD): the key a drop of an ill-formed url is counted under. */
export function storableName(name: string): string {
  return isWellFormed(name) ? name : name.replace(LONE_SURROGATES, '\ufffd');
}

// String.prototype.isWellFormed is ES2024 (Node 20, Bun and Deno have it); the pattern serves where it is missing.
const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function isWellFormed(text: string): boolean {
  const own = (text as { isWellFormed?(): boolean }).isWellFormed;
  if (own) return own.call(text);
  LONE_SURROGATES.lastIndex = 0;
  return !LONE_SURROGATES.test(text);
}

/** The per-file schema dedupe key: name + 0x1F + family label (format reference §2.5). */
export function schemaKey(name: string, family: SchemaType): string {
  return `${name}\x1f${schemaTypeLabel(family)}`;
}

/**
 * The ser a url keeps when a frame arrives: the stored one, else the frame's. A different non-empty ser is a
 * `SCHEMA_CONFLICT`: a url has one type for the whole recording.
 */
export function keptSer(stored: string, incoming: string, place: UrlPlace): string {
  if (stored === '' || incoming === '' || incoming === stored) return stored || incoming;
  throw new BagError('SCHEMA_CONFLICT', `ser type "${incoming}" conflicts with the recorded "${stored}"`, place);
}

/** The family a url keeps: Unknown yields to a known family; two different known families are a `SCHEMA_CONFLICT`. */
export function keptFamily(stored: SchemaType, incoming: SchemaType, place: UrlPlace): SchemaType {
  if (stored === SchemaType.Unknown || incoming === SchemaType.Unknown || incoming === stored)
    return stored === SchemaType.Unknown ? incoming : stored;
  throw new BagError(
    'SCHEMA_CONFLICT',
    `schema type ${schemaTypeLabel(incoming) || incoming} conflicts with the recorded ${schemaTypeLabel(stored) || stored}`,
    place,
  );
}

/**
 * A `.vdb` url's family for a frame: the explicit type, else the one its ser implies. For an RPC `Req|Resp` both
 * halves are resolved and a disagreement makes the family unknown (§2.6).
 */
export function urlFamilyOfSer(ser: string, explicit: SchemaType, action: ActionType): SchemaType {
  const bar = isRpcAction(action) ? ser.indexOf('|') : -1;
  if (bar < 0) return resolveSchemaType(explicit, ser);
  const req = resolveSchemaType(explicit, ser.slice(0, bar));
  const resp = resolveSchemaType(explicit, ser.slice(bar + 1));
  return req === resp ? req : SchemaType.Unknown;
}

/**
 * An MCAP channel's (url + action) family and the schema its ser names (§10.1 `resolve_type`): the explicit type,
 * else the schema's encoding, else a guess from the ser; the schema is the one registered for the action's half of
 * the ser.
 */
export function channelFamily(
  ser: string,
  explicit: SchemaType,
  action: ActionType,
  resolveSchema: (name: string, family: SchemaType) => SchemaData | undefined,
): { family: SchemaType; schema: SchemaData | undefined } {
  const schema = ser ? resolveSchema(serForAction(ser, action), explicit) : undefined;
  const encoding = schema ? schema.encoding || schemaTypeLabel(schema.schemaType) : undefined;
  return { family: resolveSchemaType(explicit, ser, encoding), schema };
}
