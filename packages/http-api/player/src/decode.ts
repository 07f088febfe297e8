import type { DecodableFrame, Decoded, PayloadDecoder } from '@vlink/bag-decode';
import { fromBase64 } from '../../src/messages/base64.js';
import type { SchemaJson, UrlMeta } from './api.js';

export type { Decoded };

/**
 * RPC urls store `Req|Resp` as their ser; requests show the left part, responses the right (core's `serForAction`,
 * copied: importing @vlink/bag-decode here would put it in the first chunk).
 */
export function serForAction(ser: string, action: number): string {
  if (action < 1 || action > 4) return ser;
  const bar = ser.indexOf('|');
  if (bar < 0) return ser;
  return action === 1 || action === 3 ? ser.slice(0, bar) : ser.slice(bar + 1);
}

/** Past this, a payload is shown as hex rather than parsed (the inspector is for looking, not for bulk). */
const MAX_DECODE_BYTES = 4 * 1024 * 1024;

/**
 * The inspector's front to `@vlink/bag-decode`, the decoder the CLI and the server use: protobuf through the bag's
 * embedded FileDescriptorSets (every field shown, defaults too), JSON, text, ROS 1, CDR and ULog through their
 * schemas, anything else hex. The decoder and its libraries are a separate chunk, loaded on the first frame the
 * inspector shows, so the player's first load stays small.
 */
export class InspectorDecoder {
  private decoder: Promise<PayloadDecoder> | undefined;

  constructor(
    private readonly schemas: SchemaJson[],
    private readonly urls: readonly Pick<UrlMeta, 'url' | 'encoding' | 'schemaIndex'>[] = [],
  ) {}

  async decode(frame: DecodableFrame): Promise<Decoded> {
    this.decoder ??= import('@vlink/bag-decode').then(
      (m) =>
        new m.PayloadDecoder({
          schemas: this.schemas.map((s) => ({ ...s, data: fromBase64(s.data) })),
          urls: this.urls,
          maxBytes: MAX_DECODE_BYTES,
          alwaysEmitImplicit: true,
        }),
    );
    return (await this.decoder).decode(frame);
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
