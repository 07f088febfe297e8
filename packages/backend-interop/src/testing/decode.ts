import { createFileRegistry, fromBinary, toJson } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { parse } from '@foxglove/rosmsg';
import { MessageReader as Ros1MessageReader } from '@foxglove/rosmsg-serialization';
import { MessageReader as CdrMessageReader } from '@foxglove/rosmsg2-serialization';
import { type MessageDefinition, parseMessage, parseMessageDefinition } from '@foxglove/ulog';
import type { SchemaData } from '@vlink/bag-core';

/**
 * Decoders the tests use to check that our payloads and schemas are what the reference reader decoded: the
 * maintained TypeScript libraries of each encoding, driven only by what our reader returned (schema bytes and
 * payload). Not part of the package: the shared payload decoder is a later issue.
 */
export function decodePayload(encoding: string, schema: SchemaData | undefined, data: Uint8Array): unknown {
  const text = () => new TextDecoder().decode(schema?.data ?? new Uint8Array(0));
  switch (encoding) {
    case 'json':
      return JSON.parse(new TextDecoder().decode(data));
    case 'ros1':
      return new Ros1MessageReader(parse(text())).readMessage(data);
    case 'cdr':
      return new CdrMessageReader(parse(text(), { ros2: true })).readMessage(data);
    case 'protobuf': {
      if (!schema) throw new Error('protobuf payload without a schema');
      const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, schema.data));
      const type = registry.getMessage(schema.name);
      if (!type) throw new Error(`schema ${schema.name} not in its own descriptor set`);
      return toJson(type, fromBinary(type, data), { useProtoFieldName: true });
    }
    case 'ulog': {
      const definitions = new Map<string, MessageDefinition>();
      for (const line of text().split('\n')) {
        const definition = parseMessageDefinition(line);
        if (definition) definitions.set(definition.name, definition);
      }
      const top = definitions.get(schema?.name ?? '');
      if (!top) throw new Error(`no ULog format for ${schema?.name}`);
      return parseMessage(top, definitions, new DataView(data.buffer, data.byteOffset, data.byteLength));
    }
    default:
      throw new Error(`no test decoder for ${encoding}`);
  }
}

/** The names of the files of a FileDescriptorSet schema, in order. */
export function descriptorFiles(schema: SchemaData): string[] {
  return fromBinary(FileDescriptorSetSchema, schema.data).file.map((f) => f.name);
}
