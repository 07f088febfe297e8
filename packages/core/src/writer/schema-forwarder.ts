import { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { resolveSchemaType, type SchemaType } from '../model/schema-type.js';
import type { SchemaRegistry } from './schema-registry.js';

/**
 * Schema callbacks run on the producer thread (they are user code and may close over anything), so a worker cannot
 * ask for a schema when its backend needs one. Instead, the first time a (ser, family) pair is pushed, this resolves
 * every schema the backend may ask for (the ser, and for RPC `Req|Resp` each half, in the frame's family and in the
 * one inferred from the name) and puts them in the batch ahead of the frame. One bit per family per interned ser
 * keeps the per-push cost to an array read.
 */
export class SchemaForwarder {
  private readonly serIds = new Map<string, number>();
  private readonly seen: number[] = [];
  private misses: Array<[ser: number, bit: number]> = [];
  private readonly names: string[] = [];

  constructor(
    private readonly registry: SchemaRegistry,
    private readonly send: (schema: SchemaData) => void,
    private readonly warn: (error: BagError) => void,
  ) {}

  /** The interned id of a ser name; `intern` allocates ids shared with urls. */
  serId(ser: string, intern: (value: string) => number): number {
    let id = this.serIds.get(ser);
    if (id === undefined) {
      id = intern(ser);
      this.serIds.set(ser, id);
      // An empty ser has no schema: mark every family as seen.
      this.seen[id] = ser === '' ? -1 : 0;
      this.names[id] = ser;
    }
    return id;
  }

  ensure(ser: number, frame: Frame): void {
    const bit = 1 << (frame.schemaType & 31);
    if ((this.seen[ser]! & bit) !== 0) return;
    this.seen[ser]! |= bit;
    if (!this.resolveAll(this.names[ser]!, frame.schemaType)) this.misses.push([ser, bit]);
  }

  /** A new schema callback may know what the old one did not. */
  retryMisses(): void {
    for (const [ser, bit] of this.misses) this.seen[ser]! &= ~bit;
    this.misses = [];
  }

  /** Sends what it finds; false when some wanted schema is still unknown. */
  private resolveAll(ser: string, family: SchemaType): boolean {
    const names = ser.includes('|') ? [ser, ...ser.split('|').filter(Boolean)] : [ser];
    let complete = true;
    for (const name of names) {
      const families = new Set([family, resolveSchemaType(family, name)]);
      for (const type of families) {
        try {
          const schema = this.registry.resolve(name, type);
          if (schema) this.send(schema);
          else if (name !== ser || names.length === 1) complete = false;
        } catch (error) {
          this.warn(BagError.wrap(error, 'SCHEMA_CONFLICT', `schema callback failed for "${name}"`));
        }
      }
    }
    return complete;
  }
}
