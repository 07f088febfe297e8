import { DEFAULT_MAX_DEPTH, jsonDepthExceeds, valueDepthExceeds } from './depth.js';
import { SCHEMA_PROTOBUF, SCHEMA_RAW, serForAction } from './frame-fields.js';
// Type-only, so a bundle that never passes a ProtobufDecoder never loads @bufbuild/protobuf.
import type { ProtobufDecoder } from './protobuf-decoder.js';

/** The frame fields decoding looks at; a `Frame` from @vlink/bag fits. */
export interface DecodableFrame {
  serType: string;
  actionType: number;
  schemaType: number;
  data: Uint8Array;
}

/**
 * A payload made displayable. `hex` means it stays bytes (callers show base64 or a hex dump); `reason` says why when
 * the payload looked decodable (bad UTF-8, no descriptor, a protobuf error, too large) and is absent for payloads of
 * a family nobody decodes.
 */
export type Decoded =
  | { kind: 'protobuf' | 'json'; value: unknown }
  | { kind: 'text'; value: string }
  | { kind: 'hex'; reason?: string };

/** Where the callers differ; the defaults are the HTTP API's `decode=true`. */
export interface PayloadDecoderOptions {
  /** Decodes protobuf payloads; without it they stay hex with "no descriptor embedded for …". */
  protobuf?: ProtobufDecoder | undefined;
  /**
   * Show Raw payloads whose ser is neither JSON nor text as text when they are valid UTF-8, as `vlink-bag cat
   * --decode` does (on a terminal a readable line beats a hex preview). Off by default: the HTTP API and the player
   * keep them as bytes, since a binary payload can happen to be valid UTF-8 and their clients may need it exact.
   */
  rawAsText?: boolean;
  /** Past this many bytes a payload stays hex ("too large to decode"): the player's inspector is for looking. */
  maxBytes?: number;
  /**
   * JSON and protobuf values nested deeper than this stay hex ("nested deeper than … levels"), so a hostile payload
   * cannot overflow the stack of whoever prints the value. Default `DEFAULT_MAX_DEPTH` (256).
   */
  maxDepth?: number;
}

const JSON_SERS = new Set(['json', 'application/json', 'text/json']);
const TEXT_SERS = new Set(['text', 'string', 'std::string']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Turns payloads into something displayable: protobuf through the bag's embedded descriptors, JSON and text by their
 * ser name, anything else hex. Shared by the HTTP API (`decode=true`), the CLI (`cat --decode`) and the web player's
 * inspector. Synchronous and never throws, so it can sit on a streaming hot path.
 */
export class PayloadDecoder {
  private readonly protobuf: ProtobufDecoder | undefined;
  private readonly rawAsText: boolean;
  private readonly maxBytes: number;
  private readonly maxDepth: number;

  constructor(options: PayloadDecoderOptions = {}) {
    this.protobuf = options.protobuf;
    this.rawAsText = options.rawAsText ?? false;
    this.maxBytes = options.maxBytes ?? Infinity;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  decode(frame: DecodableFrame): Decoded {
    if (frame.data.length > this.maxBytes) return { kind: 'hex', reason: 'too large to decode' };
    const ser = serForAction(frame.serType, frame.actionType);
    if (frame.schemaType === SCHEMA_PROTOBUF) {
      if (!this.protobuf) return { kind: 'hex', reason: `no descriptor embedded for ${ser}` };
      const result = this.protobuf.decode(ser, frame.data);
      if ('error' in result) return { kind: 'hex', reason: result.error };
      if (valueDepthExceeds(result.value, this.maxDepth)) return { kind: 'hex', reason: this.tooDeep() };
      return { kind: 'protobuf', value: result.value };
    }
    if (JSON_SERS.has(ser)) {
      const text = utf8Text(frame.data);
      if (text === undefined) return { kind: 'hex', reason: 'payload is not UTF-8' };
      if (text.length === 0) return { kind: 'json', value: null };
      if (jsonDepthExceeds(text, this.maxDepth)) return { kind: 'hex', reason: this.tooDeep() };
      try {
        return { kind: 'json', value: JSON.parse(text) };
      } catch {
        // A json url with a payload that is not JSON still reads better as text than as bytes.
        return { kind: 'text', value: text };
      }
    }
    if (TEXT_SERS.has(ser) || (this.rawAsText && frame.schemaType === SCHEMA_RAW)) {
      const text = utf8Text(frame.data);
      return text === undefined ? { kind: 'hex', reason: 'payload is not UTF-8' } : { kind: 'text', value: text };
    }
    return { kind: 'hex' };
  }

  private tooDeep(): string {
    return `nested deeper than ${this.maxDepth} levels`;
  }
}

function utf8Text(data: Uint8Array): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}
