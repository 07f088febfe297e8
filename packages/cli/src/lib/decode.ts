import { create, createFileRegistry, fromBinary, toJson, type DescMessage, type Registry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { SchemaType, serForAction, type Frame, type SchemaData } from '@vlink/bag';

/** A payload turned into JSON, or why it stayed bytes. */
export type Decoded = { ok: true; value: unknown } | { ok: false; reason: string };

const JSON_SERS = new Set(['json', 'application/json', 'text/json']);
const TEXT_SERS = new Set(['text', 'string', 'std::string']);

/**
 * `cat --decode`: protobuf payloads through the FileDescriptorSets the bag embeds (`createFileRegistry` +
 * `fromBinary` + `toJson`), JSON payloads parsed, text payloads as strings. Other families stay base64.
 */
export class PayloadDecoder {
  private readonly registries: Registry[] = [];
  private readonly problems: string[] = [];
  private readonly cache = new Map<string, DescMessage | null>();
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(schemas: readonly SchemaData[]) {
    const sets: FileDescriptorProto[][] = [];
    const byName = new Map<string, FileDescriptorProto>();
    for (const schema of schemas) {
      if (schema.schemaType !== SchemaType.Protobuf) continue;
      try {
        const set = fromBinary(FileDescriptorSetSchema, schema.data);
        sets.push(set.file);
        for (const file of set.file) if (!byName.has(file.name)) byName.set(file.name, file);
      } catch (error) {
        this.problems.push(`schema ${schema.name} is not a FileDescriptorSet (${(error as Error).message})`);
      }
    }
    if (byName.size === 0) return;
    try {
      this.registries.push(createFileRegistry(create(FileDescriptorSetSchema, { file: [...byName.values()] })));
    } catch {
      // Sets that conflict with each other still decode on their own.
      for (const file of sets) {
        try {
          this.registries.push(createFileRegistry(create(FileDescriptorSetSchema, { file })));
        } catch (error) {
          this.problems.push((error as Error).message);
        }
      }
    }
  }

  decode(frame: Frame): Decoded {
    const ser = serForAction(frame.serType, frame.actionType);
    if (frame.schemaType === SchemaType.Protobuf) return this.protobuf(ser, frame.data);
    if (JSON_SERS.has(ser)) {
      const text = this.text(frame.data);
      if (text === undefined) return { ok: false, reason: 'payload is not UTF-8' };
      if (text.length === 0) return { ok: true, value: null };
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return { ok: true, value: text };
      }
    }
    if (TEXT_SERS.has(ser) || frame.schemaType === SchemaType.Raw) {
      const text = this.text(frame.data);
      return text === undefined ? { ok: false, reason: 'payload is not UTF-8 text' } : { ok: true, value: text };
    }
    return { ok: false, reason: `no decoder for ${ser || 'an unknown type'}` };
  }

  private protobuf(typeName: string, data: Uint8Array): Decoded {
    const desc = this.message(typeName);
    if (!desc) {
      const why = this.problems[0] ? `; ${this.problems[0]}` : '';
      return { ok: false, reason: `no descriptor embedded for ${typeName}${why}` };
    }
    try {
      return { ok: true, value: toJson(desc, fromBinary(desc, data)) };
    } catch (error) {
      return { ok: false, reason: `protobuf decode failed: ${(error as Error).message}` };
    }
  }

  private message(typeName: string): DescMessage | undefined {
    let desc = this.cache.get(typeName);
    if (desc === undefined) {
      desc = null;
      for (const registry of this.registries) {
        const found = registry.getMessage(typeName);
        if (found) {
          desc = found;
          break;
        }
      }
      this.cache.set(typeName, desc);
    }
    return desc ?? undefined;
  }

  private text(data: Uint8Array): string | undefined {
    try {
      return this.utf8.decode(data);
    } catch {
      return undefined;
    }
  }
}
