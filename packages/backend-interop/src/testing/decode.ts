import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { PayloadDecoder } from '@vlink/bag-decode';
import type { Info, SchemaData } from '@vlink/bag-core';
import type { ReadFrame } from './read-all.js';

/**
 * Decodes a frame as every vlink-bag surface does: with `@vlink/bag-decode`'s PayloadDecoder, driven only by what
 * our reader returned (the urls' encodings, the schemas, the payload). Throws the decoder's BagError when the payload
 * does not decode, so a fixture check fails with the reason.
 */
export function decodeFrame(info: Info, schemas: readonly SchemaData[], frame: ReadFrame): unknown {
  return new PayloadDecoder({ schemas, urls: info.urls }).decodeOrThrow(frame);
}

/** The names of the files of a FileDescriptorSet schema, in order. */
export function descriptorFiles(schema: SchemaData): string[] {
  return fromBinary(FileDescriptorSetSchema, schema.data).file.map((f) => f.name);
}
