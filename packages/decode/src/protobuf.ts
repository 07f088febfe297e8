import {
  create,
  createFileRegistry,
  fromBinary,
  toJson,
  type DescMessage,
  type FileRegistry,
} from '@bufbuild/protobuf';
import { protoCamelCase } from '@bufbuild/protobuf/reflect';
import {
  FileDescriptorSetSchema,
  type DescriptorProto,
  type FieldDescriptorProto,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { messageOf } from './errors.js';

/** An embedded schema as a bag stores it; `SchemaData` from @vlink/bag fits, as does a decoded `/schemas` entry. */
export interface DecoderSchema {
  name: string;
  /** The schema encoding (`protobuf`, `ros1msg`, `ros2msg`, `ros2idl`, `ulog`, …); empty for VLink's own. */
  encoding?: string;
  schemaType: number;
  data: Uint8Array;
}

export interface ProtobufOptions {
  /**
   * Name fields by their JSON name (`json_name`, else protoc's lowerCamelCase of the name) instead of the
   * descriptor's `name`. Off by default: the `name` is what the .proto says and what every descriptor has.
   */
  jsonNames?: boolean;
  /**
   * Also write fields that hold their default value (`toJson`'s `alwaysEmitImplicit`). The web player's inspector
   * sets it so a message keeps its shape while values pass through zero; the HTTP API and the CLI leave it off, as
   * the proto3 JSON mapping does.
   */
  alwaysEmitImplicit?: boolean;
}

/**
 * Protobuf payloads → JSON values (the proto3 JSON mapping: int64 as strings, bytes as base64, enums by name)
 * through the FileDescriptorSets embedded in a bag: one registry over every file, or one per set when they conflict.
 * Built once per bag; message types are looked up once and cached. Never throws while building: a bad schema is
 * reported with the payloads that need it.
 */
export class ProtobufRegistry {
  private readonly registries: FileRegistry[] = [];
  private readonly messages = new Map<string, DescMessage | null>();
  /** Why building the registry failed for some schemas, reported with the first payload that needed them. */
  private readonly problems: string[] = [];
  private readonly options: { useProtoFieldName: boolean; alwaysEmitImplicit: boolean };

  constructor(schemas: readonly DecoderSchema[], options: ProtobufOptions = {}) {
    this.options = { useProtoFieldName: !options.jsonNames, alwaysEmitImplicit: options.alwaysEmitImplicit ?? false };
    const files = new Map<string, FileDescriptorProto>();
    const sets: FileDescriptorProto[][] = [];
    for (const schema of schemas) {
      try {
        const set = fromBinary(FileDescriptorSetSchema, schema.data);
        for (const file of set.file) fillJsonNames(file.messageType, file.extension);
        sets.push(set.file);
        for (const file of set.file) if (!files.has(file.name)) files.set(file.name, file);
      } catch (error) {
        this.problems.push(`schema ${schema.name} is not a FileDescriptorSet: ${messageOf(error)}`);
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
          this.problems.push(messageOf(error));
        }
      }
    }
  }

  /** The message type, or why there is none (no descriptor, or the schemas that failed to load). */
  message(typeName: string): DescMessage | string {
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
    if (desc) return desc;
    const why = this.problems.length > 0 ? ` (${this.problems[0]})` : '';
    return `no protobuf descriptor embedded for ${typeName}${why}`;
  }

  /** Decodes one payload of a type found by {@link message}; throws the library's error for bytes that do not fit. */
  decode(desc: DescMessage, data: Uint8Array): unknown {
    return toJson(desc, fromBinary(desc, data), this.options);
  }
}

/**
 * Descriptors without `json_name` (legal, and what many tools write) would otherwise give every field the JSON name
 * "" in @bufbuild/protobuf; fill in protoc's default so the `jsonNames` option works on them too.
 */
function fillJsonNames(messages: readonly DescriptorProto[], extensions: readonly FieldDescriptorProto[]): void {
  for (const field of extensions) if (!field.jsonName) field.jsonName = protoCamelCase(field.name);
  for (const message of messages) {
    for (const field of message.field) if (!field.jsonName) field.jsonName = protoCamelCase(field.name);
    fillJsonNames(message.nestedType, message.extension);
  }
}
