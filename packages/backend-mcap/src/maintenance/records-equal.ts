import { equalBytes } from '@vlink/bag-core/internal';
import type { Channel, Schema } from '../mcap/records.js';

/** Two schema records with the same id say the same thing. */
export function sameSchema(a: Schema, b: Schema): boolean {
  return a.id === b.id && a.name === b.name && a.encoding === b.encoding && equalBytes(a.data, b.data);
}

/** Two channel records with the same id say the same thing (metadata compared as a map). */
export function sameChannel(a: Channel, b: Channel): boolean {
  if (a.id !== b.id || a.topic !== b.topic || a.messageEncoding !== b.messageEncoding || a.schemaId !== b.schemaId)
    return false;
  if (a.metadata.size !== b.metadata.size) return false;
  for (const [k, v] of a.metadata) if (b.metadata.get(k) !== v) return false;
  return true;
}

/** A schema equals a schema and a channel a channel as above; a schema never equals a channel. */
export function sameDefinition(a: Schema | Channel, b: Schema | Channel): boolean {
  if (a.type === 'Schema') return b.type === 'Schema' && sameSchema(a, b);
  return b.type === 'Channel' && sameChannel(a, b);
}
