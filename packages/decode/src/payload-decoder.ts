import type { BagError } from '@vlink/bag-core/errors';
import { DEFAULT_MAX_DEPTH, scanJson, valueDepthExceeds } from './depth.js';
import { parseJsonKeepingIntegers } from './json-integers.js';
import { decodeCbor } from './cbor.js';
import { payloadEncoding, type PayloadEncoding } from './encodings.js';
import { decodeError, messageOf } from './errors.js';
import { SchemaType, serForAction } from '@vlink/bag-core/model';
import { plainValue, TooDeepError } from './plain-value.js';
import { flatbufferDecoder } from './flatbuffer.js';
import { ProtobufRegistry, type DecoderSchema, type ProtobufOptions } from './protobuf.js';
import { cdrDecoder, ros1Decoder, type MessageDecoder } from './ros.js';
import { ulogMessageDecoder } from './ulog-messages.js';
import { ulogDecoder } from './ulog.js';

/** The frame fields decoding looks at; a `Frame` from @vlink/bag fits. */
export interface DecodableFrame {
  /** Picks the channel's declared encoding (from `urls`); frames without one are decoded by their family. */
  url?: string;
  serType: string;
  actionType: number;
  schemaType: number;
  data: Uint8Array;
}

/** A url of the bag as `Info.urls` lists it; only `url` and `encoding` are read. */
export interface DecoderChannel {
  url: string;
  /** The channel's message encoding (foreign formats, and `.vcap` files that declare one). */
  encoding?: string | undefined;
  /**
   * The position in `schemas` of the channel's own schema (`UrlMeta.schemaIndex`): its payloads are decoded with it
   * even when another schema has the same name. Without one, the schema is found by the payload's type name.
   */
  schemaIndex?: number | undefined;
}

/** What a payload decoded as: the encoding that decoded it (`text` for Raw payloads shown as text). */
export type DecodedKind = 'protobuf' | 'json' | 'cbor' | 'ros1' | 'cdr' | 'ulog' | 'flatbuffer' | 'text';

/**
 * A payload made displayable. `hex` means it stays bytes (callers show base64 or a hex dump); `reason` and `error`
 * (a BagError naming the type, with the url) say why when the payload looked decodable (bad UTF-8, no schema, bytes
 * that do not fit the schema, too large or deep) and are absent for payloads of an encoding nobody decodes.
 */
export type Decoded =
  | { kind: Exclude<DecodedKind, 'text'>; value: unknown }
  | { kind: 'text'; value: string }
  | { kind: 'hex'; reason?: string; error?: BagError };

/** Where the callers differ; the defaults are the HTTP API's `decode=true`. */
export interface PayloadDecoderOptions extends ProtobufOptions {
  /** The bag's embedded schemas (`BagReader.getSchemas()`); without them only JSON and text decode. */
  schemas?: readonly DecoderSchema[];
  /** The bag's urls (`Info.urls`): their declared encodings say how to decode each url's payloads. */
  urls?: readonly DecoderChannel[];
  /**
   * Show Raw payloads whose encoding is neither JSON nor text as text when they are valid UTF-8, as `vlink-bag cat
   * --decode` does (on a terminal a readable line beats a hex preview). Off by default: the HTTP API and the player
   * keep them as bytes, since a binary payload can happen to be valid UTF-8 and their clients may need it exact.
   */
  rawAsText?: boolean;
  /** Past this many bytes a payload stays hex ("too large to decode"): the player's inspector is for looking. */
  maxBytes?: number;
  /**
   * Values nested deeper than this stay hex ("nested deeper than … levels"), so a hostile payload cannot overflow
   * the stack of whoever prints the value. Default `DEFAULT_MAX_DEPTH` (256).
   */
  maxDepth?: number;
}

/** The encodings decoded through an embedded schema. */
type SchemaEncoding = 'protobuf' | 'ros1' | 'cdr' | 'ulog' | 'flatbuffer';
/** Schema encodings of a bfbs, as VLink (`flatbuffers`, §10.1) and MCAP (`flatbuffer`) spell them. */
const FLATBUFFER_SCHEMAS: ReadonlySet<string> = new Set(['flatbuffer', 'flatbuffers', 'fbs', 'bfbs']);

const utf8 = new TextDecoder('utf-8', { fatal: true });
const text = new TextDecoder();
type Built = MessageDecoder | { error: BagError };

/**
 * The one payload decoder of vlink-bag (CLI `cat --decode`, the HTTP API's `decode=true` in the server and its
 * worker pool, the Foxglove endpoints' checks, the web player's inspector): protobuf through the embedded
 * FileDescriptorSets, JSON, schemaless CBOR, text, ROS 1 through `ros1msg` schemas, CDR through `ros2msg`/`ros2idl`/`omgidl` schemas, PX4 ULog
 * samples, flatbuffers through embedded `bfbs` schemas; anything else stays bytes. Built once per bag; each (type, encoding) decoder is built on first use and
 * cached. Synchronous, and `decode` never throws, so it can sit on a streaming hot path (`decodeOrThrow` throws the
 * BagError instead).
 */
export class PayloadDecoder {
  private readonly schemas: readonly DecoderSchema[];
  private readonly encodings = new Map<string, string | undefined>();
  /** Per url, the index of its own schema; null where its channels name different ones (the type name decides). */
  private readonly ownSchemas = new Map<string, number | null>();
  private readonly options: ProtobufOptions;
  private readonly rawAsText: boolean;
  private readonly maxBytes: number;
  private readonly maxDepth: number;
  private protobuf: ProtobufRegistry | undefined;
  private readonly built = new Map<string, Built>();

  constructor(options: PayloadDecoderOptions = {}) {
    this.schemas = options.schemas ?? [];
    for (const channel of options.urls ?? []) {
      if (!this.encodings.has(channel.url)) this.encodings.set(channel.url, channel.encoding);
      const own = channel.schemaIndex ?? null;
      const known = this.ownSchemas.get(channel.url);
      this.ownSchemas.set(channel.url, known === undefined || known === own ? own : null);
    }
    this.options = {
      ...(options.jsonNames === undefined ? {} : { jsonNames: options.jsonNames }),
      ...(options.alwaysEmitImplicit === undefined ? {} : { alwaysEmitImplicit: options.alwaysEmitImplicit }),
    };
    this.rawAsText = options.rawAsText ?? false;
    this.maxBytes = options.maxBytes ?? Infinity;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /** How many per-type decoders have been built so far (each (type, encoding) once). */
  get builtDecoders(): number {
    return this.built.size;
  }

  /** The encoding a frame's payload is decoded as, or undefined when it stays bytes. */
  encodingOf(frame: DecodableFrame): PayloadEncoding | undefined {
    const declared = frame.url === undefined ? undefined : this.encodings.get(frame.url);
    return payloadEncoding(declared, frame.schemaType, serForAction(frame.serType, frame.actionType));
  }

  decode(frame: DecodableFrame): Decoded {
    const type = serForAction(frame.serType, frame.actionType);
    const encoding = this.encodingOf(frame);
    const fail = (code: Parameters<typeof decodeError>[0], reason: string, cause?: unknown): Decoded => ({
      kind: 'hex',
      reason,
      error: decodeError(code, reason, frame.url, cause),
    });
    if (frame.data.length > this.maxBytes) return fail('LIMIT_REACHED', 'too large to decode');
    switch (encoding) {
      case 'json':
        return this.json(frame.data, fail);
      case 'text':
        return this.text(frame.data, fail);
      case 'raw':
        return this.rawAsText ? this.text(frame.data, fail) : { kind: 'hex' };
      case 'cbor':
        return this.cbor(frame.data, fail);
      case 'protobuf':
      case 'ros1':
      case 'cdr':
      case 'ulog':
      case 'flatbuffer': {
        const own = frame.url === undefined ? undefined : (this.ownSchemas.get(frame.url) ?? undefined);
        const decoder = this.decoderFor(type, encoding, own);
        if ('error' in decoder)
          return { kind: 'hex', reason: decoder.error.reason, error: withUrl(decoder.error, frame.url) };
        let value: unknown;
        try {
          value = decoder.decode(frame.data);
        } catch (error) {
          return fail('CORRUPT_DATA', `${encoding} decode of ${type} failed: ${messageOf(error)}`, error);
        }
        try {
          value = encoding === 'protobuf' ? checkDepth(value, this.maxDepth) : plainValue(value, this.maxDepth);
        } catch (error) {
          if (error instanceof TooDeepError) return fail('LIMIT_REACHED', this.tooDeep());
          throw error;
        }
        return { kind: encoding, value };
      }
      default:
        return { kind: 'hex' };
    }
  }

  /** The decoded value, or the BagError that says why the payload did not decode (`NOT_SUPPORTED` for bytes). */
  decodeOrThrow(frame: DecodableFrame): unknown {
    const decoded = this.decode(frame);
    if (decoded.kind !== 'hex') return decoded.value;
    throw (
      decoded.error ??
      decodeError(
        'NOT_SUPPORTED',
        `no decoder for ${serForAction(frame.serType, frame.actionType) || 'untyped'} payloads (${this.encodingOf(frame) ?? 'no encoding'})`,
        frame.url,
      )
    );
  }

  private json(data: Uint8Array, fail: (code: 'LIMIT_REACHED' | 'CORRUPT_DATA', reason: string) => Decoded): Decoded {
    const value = utf8Text(data);
    if (value === undefined) return fail('CORRUPT_DATA', 'payload is not UTF-8');
    if (value.length === 0) return { kind: 'json', value: null };
    const scan = scanJson(value, this.maxDepth);
    if (scan.tooDeep) return fail('LIMIT_REACHED', this.tooDeep());
    try {
      return { kind: 'json', value: scan.unsafeInteger ? parseJsonKeepingIntegers(value) : JSON.parse(value) };
    } catch {
      // A json url with a payload that is not JSON still reads better as text than as bytes.
      return { kind: 'text', value };
    }
  }

  private cbor(data: Uint8Array, fail: (code: 'LIMIT_REACHED' | 'CORRUPT_DATA', reason: string) => Decoded): Decoded {
    try {
      return { kind: 'cbor', value: plainValue(decodeCbor(data, this.maxDepth), this.maxDepth) };
    } catch (error) {
      // A nesting deeper than the stack (cborg recurses) is as much too deep as one past the limit.
      const stack = error instanceof RangeError && /call stack/i.test(error.message);
      if (error instanceof TooDeepError || stack) return fail('LIMIT_REACHED', this.tooDeep());
      return fail('CORRUPT_DATA', `cbor decode failed: ${messageOf(error)}`);
    }
  }

  private text(data: Uint8Array, fail: (code: 'CORRUPT_DATA', reason: string) => Decoded): Decoded {
    const value = utf8Text(data);
    return value === undefined ? fail('CORRUPT_DATA', 'payload is not UTF-8') : { kind: 'text', value };
  }

  /**
   * The decoder of one (type, encoding), built on first use and cached: from the url's own schema (`own`, an index
   * into the schemas) when it has one of that name and encoding, else from the schema of that name.
   */
  private decoderFor(type: string, encoding: SchemaEncoding, own: number | undefined): Built {
    const schema = own === undefined ? undefined : this.schemas[own];
    const ownFits = schema !== undefined && schema.name === type && fitsEncoding(schema, encoding);
    const key = ownFits ? `${encoding}\u0000${type}\u0000${own}` : `${encoding}\u0000${type}`;
    let built = this.built.get(key);
    if (built === undefined) {
      built = this.build(type, encoding, ownFits ? schema : undefined);
      this.built.set(key, built);
    }
    return built;
  }

  private build(type: string, encoding: SchemaEncoding, own: DecoderSchema | undefined): Built {
    if (encoding === 'protobuf') {
      // A url's own descriptor set stands alone (MCAP's protobuf schemas carry their dependencies); the shared
      // registry of every descriptor keeps one message per full name, the last one registered.
      const registry = own
        ? new ProtobufRegistry([own], this.options)
        : (this.protobuf ??= new ProtobufRegistry(this.schemas.filter(isProtobufSchema), this.options));
      const desc = registry.message(type);
      if (typeof desc === 'string') return { error: decodeError('NOT_FOUND', desc, undefined) };
      return { decode: (data) => registry.decode(desc, data) };
    }
    const schema = own ?? this.schemas.find((s) => s.name === type && fitsEncoding(s, encoding));
    // ULog's logging, dropout and parameter messages have the format's own layout (ulog-messages.ts).
    const builtin = !schema && encoding === 'ulog' ? ulogMessageDecoder(type) : undefined;
    if (builtin) return builtin;
    if (!schema)
      return {
        error: decodeError('NOT_FOUND', `no ${encoding} schema embedded for ${type || 'untyped payloads'}`, undefined),
      };
    try {
      if (encoding === 'flatbuffer') return flatbufferDecoder(type, schema.data);
      const definition = text.decode(schema.data);
      if (encoding === 'ros1') return ros1Decoder(type, definition);
      if (encoding === 'cdr') return cdrDecoder(type, schema.encoding ?? '', definition);
      return ulogDecoder(type, definition);
    } catch (error) {
      return {
        error: decodeError(
          'CORRUPT_DATA',
          `the ${schema.encoding || encoding} schema of ${type} does not parse: ${messageOf(error)}`,
          undefined,
          error,
        ),
      };
    }
  }

  private tooDeep(): string {
    return `nested deeper than ${this.maxDepth} levels`;
  }
}

function isProtobufSchema(schema: DecoderSchema): boolean {
  return schema.schemaType === SchemaType.Protobuf || schema.encoding === 'protobuf';
}

/**
 * Whether a schema can decode payloads of an encoding: protobuf descriptors for protobuf, ros1msg for ros1;
 * ros2msg/ros2idl/omgidl (or VLink's untagged) for cdr, bfbs for flatbuffers, ULog formats for ulog.
 */
function fitsEncoding(schema: DecoderSchema, encoding: SchemaEncoding): boolean {
  const schemaEncoding = (schema.encoding ?? '').toLowerCase();
  if (encoding === 'protobuf') return isProtobufSchema(schema);
  if (encoding === 'flatbuffer')
    return (
      FLATBUFFER_SCHEMAS.has(schemaEncoding) || (schemaEncoding === '' && schema.schemaType === SchemaType.Flatbuffers)
    );
  if (encoding === 'ros1') return schemaEncoding === 'ros1msg' || schemaEncoding === '';
  if (encoding === 'cdr') return ['ros2msg', 'ros2idl', 'omgidl', 'cdr', ''].includes(schemaEncoding);
  return schemaEncoding === 'ulog';
}

function checkDepth(value: unknown, maxDepth: number): unknown {
  if (valueDepthExceeds(value, maxDepth)) throw new TooDeepError();
  return value;
}

/** A cached build error is shared by every frame of the type; each answer names its own url. */
function withUrl(error: BagError, url: string | undefined): BagError {
  return url === undefined ? error : decodeError(error.code as 'NOT_FOUND', error.reason, url, error.cause);
}

function utf8Text(data: Uint8Array): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}
