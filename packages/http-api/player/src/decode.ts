import { SCHEMA_PROTOBUF } from '../../src/decode/frame-fields.js';
import {
  PayloadDecoder,
  type DecodableFrame,
  type Decoded,
  type PayloadDecoderOptions,
} from '../../src/decode/payload-decoder.js';
import { fromBase64 } from '../../src/messages/base64.js';
import type { SchemaJson } from './api.js';

export type { Decoded };
export { serForAction } from '../../src/decode/frame-fields.js';

/** Past this, a payload is shown as hex rather than parsed (the inspector is for looking, not for bulk). */
const MAX_DECODE_BYTES = 4 * 1024 * 1024;
const OPTIONS: PayloadDecoderOptions = { maxBytes: MAX_DECODE_BYTES };

/**
 * The inspector's front to the server's payload decoder (`src/decode/`): protobuf through the bag's embedded
 * FileDescriptorSets, JSON and text by their ser name, anything else hex. The protobuf half (@bufbuild/protobuf) is a
 * separate chunk, loaded on the first protobuf frame of a bag that embeds descriptors, so other bags never download it.
 */
export class InspectorDecoder {
  private readonly plain = new PayloadDecoder(OPTIONS);
  private full: Promise<PayloadDecoder> | undefined;
  private readonly hasProtobuf: boolean;

  constructor(private readonly schemas: SchemaJson[]) {
    this.hasProtobuf = schemas.some((s) => s.schemaType === SCHEMA_PROTOBUF);
  }

  async decode(frame: DecodableFrame): Promise<Decoded> {
    // The plain decoder already answers these: not protobuf, no descriptors at all, or too large to look at.
    const needsProtobuf =
      this.hasProtobuf && frame.schemaType === SCHEMA_PROTOBUF && frame.data.length <= MAX_DECODE_BYTES;
    if (!needsProtobuf) return this.plain.decode(frame);
    this.full ??= import('../../src/decode/protobuf-decoder.js').then((m) => {
      const schemas = this.schemas.map((s) => ({ ...s, data: fromBase64(s.data) }));
      return new PayloadDecoder({ ...OPTIONS, protobuf: new m.ProtobufDecoder(schemas, { alwaysEmitImplicit: true }) });
    });
    return (await this.full).decode(frame);
  }
}

/** A classic hex dump (offset, 16 bytes, ASCII) of the first `limit` bytes. */
export function hexDump(data: Uint8Array, limit = 4096): string {
  const lines: string[] = [];
  const end = Math.min(data.length, limit);
  for (let at = 0; at < end; at += 16) {
    const row = data.subarray(at, Math.min(at + 16, end));
    let hex = '';
    let ascii = '';
    for (let i = 0; i < 16; i++) {
      if (i < row.length) {
        const b = row[i]!;
        hex += b.toString(16).padStart(2, '0') + (i === 7 ? '  ' : ' ');
        ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
      } else hex += i === 7 ? '    ' : '   ';
    }
    lines.push(`${at.toString(16).padStart(8, '0')}  ${hex} ${ascii}`);
  }
  return lines.join('\n');
}
