import {
  create,
  createFileRegistry,
  fromBinary,
  toJson,
  type DescMessage,
  type FileRegistry,
} from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { SCHEMA_PROTOBUF } from './frame-fields.js';

/** An embedded schema as a bag stores it; `SchemaData` from @vlink/bag fits, as does a decoded `/schemas` entry. */
export interface DecoderSchema {
  name: string;
  schemaType: number;
  data: Uint8Array;
}

export interface ProtobufDecoderOptions {
  /**
   * Also write fields that hold their default value (`toJson`'s `alwaysEmitImplicit`). The web player's inspector
   * sets it so a message keeps its shape while values pass through zero; the HTTP API and the CLI leave it off, as
   * the proto3 JSON mapping does.
   */
  alwaysEmitImplicit?: boolean;
}

/**
 * Protobuf payloads → JSON through the FileDescriptorSets embedded in a bag: one registry over every file, or one per
 * set when they conflict. Built once per bag; never throws (a bad schema is reported with the payloads that need it).
 * A module of its own so a bundle can load @bufbuild/protobuf only for bags that have protobuf.
 */
export class ProtobufDecoder {
  private readonly registries: FileRegistry[] = [];
  private readonly messages = new Map<string, DescMessage | null>();
  /** Why building the registry failed for some schemas, reported with the first payload that needed them. */
  private readonly problems: string[] = [];
  private readonly alwaysEmitImplicit: boolean;

  constructor(schemas: readonly DecoderSchema[], options: ProtobufDecoderOptions = {}) {
    this.alwaysEmitImplicit = options.alwaysEmitImplicit ?? false;
    const files = new Map<string, FileDescriptorProto>();
    const sets: FileDescriptorProto[][] = [];
    for (const schema of schemas) {
      if (schema.schemaType !== SCHEMA_PROTOBUF) continue;
      try {
        const set = fromBinary(FileDescriptorSetSchema, schema.data);
        sets.push(set.file);
        for (const file of set.file) if (!files.has(file.name)) files.set(file.name, file);
      } catch (error) {
        this.problems.push(`schema ${schema.name} is not a FileDescriptorSet: ${message(error)}`);
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
          this.problems.push(message(error));
        }
      }
    }
  }

  /** The payload as a JSON value, or why it could not be decoded. */
  decode(typeName: string, data: Uint8Array): { value: unknown } | { error: string } {
    const desc = this.message(typeName);
    if (!desc) {
      const why = this.problems.length > 0 ? ` (${this.problems[0]})` : '';
      return { error: `no descriptor embedded for ${typeName}${why}` };
    }
    try {
      return { value: toJson(desc, fromBinary(desc, data), { alwaysEmitImplicit: this.alwaysEmitImplicit }) };
    } catch (error) {
      return { error: `protobuf decode failed: ${message(error)}` };
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
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
