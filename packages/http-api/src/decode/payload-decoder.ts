import { create, createFileRegistry, fromBinary, toJson, type DescMessage, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { SchemaType, serForAction, type Frame, type SchemaData } from '@vlink/bag';

/** How a payload was turned into JSON for `decode=true`; `null` when it was left as base64. */
export type DecodedKind = 'protobuf' | 'json' | 'text' | null;

export interface Decoded {
  kind: DecodedKind;
  /** The decoded value (a JSON value or a string); absent when `kind` is null. */
  value?: unknown;
  /** Why a payload that looked decodable was not decoded. */
  error?: string;
}

const JSON_SERS = new Set(['json', 'application/json', 'text/json']);
const TEXT_SERS = new Set(['text', 'string', 'std::string']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes payloads for `decode=true`: protobuf through the FileDescriptorSets embedded in the bag, JSON and text by
 * their ser name. Built once per bag (the registry is cached with the bag's reader entry).
 */
export class PayloadDecoder {
  private readonly registries: FileRegistry[] = [];
  private readonly messages = new Map<string, DescMessage | null>();
  /** Why building the registry failed for some schemas, reported with the first payload that needed them. */
  private readonly buildErrors: string[] = [];

  constructor(schemas: readonly SchemaData[]) {
    const files = new Map<string, FileDescriptorProto>();
    const sets: FileDescriptorProto[][] = [];
    for (const schema of schemas) {
      if (schema.schemaType !== SchemaType.Protobuf) continue;
      try {
        const set = fromBinary(FileDescriptorSetSchema, schema.data);
        sets.push(set.file);
        for (const file of set.file) if (!files.has(file.name)) files.set(file.name, file);
      } catch (error) {
        this.buildErrors.push(`schema ${schema.name} is not a FileDescriptorSet: ${(error as Error).message}`);
      }
    }
    if (files.size === 0) return;
    try {
      this.registries.push(createFileRegistry(create(FileDescriptorSetSchema, { file: [...files.values()] })));
    } catch {
      // One broken or conflicting set must not hide the others: fall back to one registry per embedded set.
      for (const file of sets) {
        try {
          this.registries.push(createFileRegistry(create(FileDescriptorSetSchema, { file })));
        } catch (error) {
          this.buildErrors.push((error as Error).message);
        }
      }
    }
  }

  decode(frame: Frame): Decoded {
    const ser = serForAction(frame.serType, frame.actionType);
    if (frame.schemaType === SchemaType.Protobuf) return this.decodeProtobuf(ser, frame.data);
    if (JSON_SERS.has(ser)) {
      const text = this.text(frame.data);
      if (text === undefined) return { kind: null, error: 'payload is not UTF-8' };
      try {
        return { kind: 'json', value: text.length === 0 ? null : JSON.parse(text) };
      } catch {
        return { kind: 'text', value: text };
      }
    }
    if (TEXT_SERS.has(ser)) {
      const text = this.text(frame.data);
      return text === undefined ? { kind: null, error: 'payload is not UTF-8' } : { kind: 'text', value: text };
    }
    return { kind: null };
  }

  private decodeProtobuf(typeName: string, data: Uint8Array): Decoded {
    const desc = this.message(typeName);
    if (!desc) {
      const why = this.buildErrors.length > 0 ? ` (${this.buildErrors[0]})` : '';
      return { kind: null, error: `no descriptor embedded for ${typeName}${why}` };
    }
    try {
      return { kind: 'protobuf', value: toJson(desc, fromBinary(desc, data)) };
    } catch (error) {
      return { kind: null, error: `protobuf decode failed: ${(error as Error).message}` };
    }
  }

  private message(typeName: string): DescMessage | undefined {
    let desc = this.messages.get(typeName);
    if (desc === undefined) {
      desc = null;
      for (const registry of this.registries) {
        const found = registry.getMessage(typeName);
        if (found) {
          desc = found;
          break;
        }
      }
      this.messages.set(typeName, desc);
    }
    return desc ?? undefined;
  }

  private text(data: Uint8Array): string | undefined {
    try {
      return utf8.decode(data);
    } catch {
      return undefined;
    }
  }
}
