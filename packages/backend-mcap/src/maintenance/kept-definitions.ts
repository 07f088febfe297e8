import type { ByteWriter } from '../mcap/byte-writer.js';
import { writeChannel } from '../mcap/record-encoder.js';
import type { Channel, Schema } from '../mcap/records.js';
import { sameChannel, sameSchema } from './records-equal.js';

/** What to write for a schema or channel record: the record as it was, nothing, or these re-encoded bytes. */
export type DefinitionVerdict = 'keep' | 'drop' | Uint8Array;

/**
 * The schemas and channels a rebuild keeps, by id. Loose records and records inside chunks go through the same
 * `define`, so a channel whose schema was lost is kept (without it) the same way wherever it turns up.
 */
export class KeptDefinitions {
  readonly schemas = new Map<number, Schema>();
  readonly channels = new Map<number, Channel>();

  /** `scratch` is shared with the rebuilder: re-encoded records are copied out of it before it is reused. */
  constructor(private readonly scratch: ByteWriter) {}

  /** Registers a schema or channel: `keep` it, `drop` a conflicting duplicate, or write re-encoded bytes instead. */
  define(record: Schema | Channel): DefinitionVerdict {
    if (record.type === 'Schema') {
      const known = this.schemas.get(record.id);
      if (known) return sameSchema(known, record) ? 'keep' : 'drop';
      this.schemas.set(record.id, { ...record, data: record.data.slice() });
      return 'keep';
    }
    const known = this.channels.get(record.id);
    if (known) {
      if (sameChannel(known, record)) return 'keep';
      // A repeat of a channel kept without its lost schema: repeat the kept form.
      return known.schemaId === 0 && sameChannel(known, { ...record, schemaId: 0 })
        ? encodeChannel(this.scratch, known)
        : 'drop';
    }
    if (record.schemaId !== 0 && !this.schemas.has(record.schemaId)) {
      // Its schema was lost with a damaged chunk: keep the channel (and its messages) without a schema.
      const orphan = { ...record, schemaId: 0 };
      this.channels.set(record.id, orphan);
      return encodeChannel(this.scratch, orphan);
    }
    this.channels.set(record.id, record);
    return 'keep';
  }
}

function encodeChannel(w: ByteWriter, channel: Channel): Uint8Array {
  w.reset();
  writeChannel(w, channel);
  return w.view8().slice();
}
