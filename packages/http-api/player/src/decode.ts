import type { SchemaJson } from './api.js';
import type { ProtoDecoder } from './proto-decoder.js';

/** A payload as the inspector shows it. */
export type Decoded =
  | { kind: 'protobuf' | 'json'; value: unknown }
  | { kind: 'text'; value: string }
  | { kind: 'hex'; note?: string };

export interface FrameLike {
  url: string;
  serType: string;
  actionType: number;
  schemaType: number;
  data: Uint8Array;
}

const PROTOBUF = 3;
const JSON_SERS = new Set(['json', 'application/json', 'text/json']);
const TEXT_SERS = new Set(['text', 'string', 'std::string']);
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Past this, a payload is shown as hex rather than parsed (the inspector is for looking, not for bulk). */
const MAX_DECODE_BYTES = 4 * 1024 * 1024;

/** RPC urls store `Req|Resp` as their ser; requests (C/Req, S/Req) use the left part, responses the right. */
export function serForAction(ser: string, action: number): string {
  if (action < 1 || action > 4) return ser;
  const bar = ser.indexOf('|');
  if (bar < 0) return ser;
  return action === 1 || action === 3 ? ser.slice(0, bar) : ser.slice(bar + 1);
}

/**
 * Decodes payloads like the server's `decode=true`: protobuf through the bag's embedded FileDescriptorSets (the
 * @bufbuild/protobuf registry is loaded on first use, so bags without protobuf never download it), JSON and text by
 * their ser name; anything else is shown as hex.
 */
export class PayloadDecoder {
  private proto: Promise<ProtoDecoder> | undefined;

  constructor(private readonly schemas: SchemaJson[]) {}

  get hasProtobuf(): boolean {
    return this.schemas.some((s) => s.schemaType === PROTOBUF);
  }

  async decode(frame: FrameLike): Promise<Decoded> {
    if (frame.data.length > MAX_DECODE_BYTES) return { kind: 'hex', note: 'too large to decode' };
    const ser = serForAction(frame.serType, frame.actionType);
    if (frame.schemaType === PROTOBUF) {
      if (!this.hasProtobuf) return { kind: 'hex', note: `no descriptor embedded for ${ser}` };
      this.proto ??= import('./proto-decoder.js').then((m) => new m.ProtoDecoder(this.schemas));
      const result = (await this.proto).decode(ser, frame.data);
      return 'error' in result ? { kind: 'hex', note: result.error } : { kind: 'protobuf', value: result.value };
    }
    if (JSON_SERS.has(ser)) {
      const text = utf8Text(frame.data);
      if (text === undefined) return { kind: 'hex', note: 'payload is not UTF-8' };
      try {
        return { kind: 'json', value: text.length === 0 ? null : JSON.parse(text) };
      } catch {
        return { kind: 'text', value: text };
      }
    }
    if (TEXT_SERS.has(ser)) {
      const text = utf8Text(frame.data);
      return text === undefined ? { kind: 'hex', note: 'payload is not UTF-8' } : { kind: 'text', value: text };
    }
    return { kind: 'hex' };
  }
}

function utf8Text(data: Uint8Array): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
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
