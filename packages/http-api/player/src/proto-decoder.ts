import { create, createFileRegistry, fromBinary, toJson, type DescMessage, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import type { SchemaJson } from './api.js';

const PROTOBUF = 3;

function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Protobuf payloads → JSON through the FileDescriptorSets embedded in the bag (`/schemas`), the same way the
 * server's `decode=true` does: one registry over every file, or one per set when they conflict. A separate module so
 * it is a separate chunk, fetched only for bags that have protobuf.
 */
export class ProtoDecoder {
  private readonly registries: FileRegistry[] = [];
  private readonly messages = new Map<string, DescMessage | null>();
  private readonly problems: string[] = [];

  constructor(schemas: readonly SchemaJson[]) {
    const files = new Map<string, FileDescriptorProto>();
    const sets: FileDescriptorProto[][] = [];
    for (const schema of schemas) {
      if (schema.schemaType !== PROTOBUF) continue;
      try {
        const set = fromBinary(FileDescriptorSetSchema, fromBase64(schema.data));
        sets.push(set.file);
        for (const file of set.file) if (!files.has(file.name)) files.set(file.name, file);
      } catch (error) {
        this.problems.push(`schema ${schema.name} is not a FileDescriptorSet: ${(error as Error).message}`);
      }
    }
    if (files.size === 0) return;
    try {
      this.registries.push(createFileRegistry(create(FileDescriptorSetSchema, { file: [...files.values()] })));
    } catch {
      for (const file of sets) {
        try {
          this.registries.push(createFileRegistry(create(FileDescriptorSetSchema, { file })));
        } catch (error) {
          this.problems.push((error as Error).message);
        }
      }
    }
  }

  decode(typeName: string, data: Uint8Array): { value: unknown } | { error: string } {
    const desc = this.message(typeName);
    if (!desc) return { error: `no descriptor embedded for ${typeName}${this.problems.length ? ` (${this.problems[0]})` : ''}` };
    try {
      return { value: toJson(desc, fromBinary(desc, data), { alwaysEmitImplicit: true }) };
    } catch (error) {
      return { error: `protobuf decode failed: ${(error as Error).message}` };
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
