import { parseBasicFieldValue, parseFieldDefinition } from '@foxglove/ulog';
import type { MessageDecoder } from './ros.js';

/**
 * The ULog messages that are not topic samples, as `@vlink/bag-interop`'s reader gives them (urls `ulog/…`, ser
 * `ulog.<kind>`, the message body as the payload). The format defines their layout, so they need no schema; values
 * are named as pyulog names them (`log_level`, `tag`, `timestamp`, `message`; a dropout's `duration`).
 */
export function ulogMessageDecoder(type: string): MessageDecoder | undefined {
  switch (type) {
    case 'ulog.logging':
      return { decode: (data) => logging(data, false) };
    case 'ulog.loggingTagged':
      return { decode: (data) => logging(data, true) };
    case 'ulog.dropout':
      return { decode: (data) => ({ duration: viewOf(data, 2).getUint16(0, true) }) };
    case 'ulog.parameter':
      return { decode: parameter };
    default:
      return undefined;
  }
}

/** Kernel log levels as the logger writes them, ASCII `'0'`–`'7'` (pyulog's `log_level_str`). */
const LEVELS = ['EMERGENCY', 'ALERT', 'CRITICAL', 'ERROR', 'WARNING', 'NOTICE', 'INFO', 'DEBUG'];
const text = new TextDecoder();

/** A view of the body, refused when it is shorter than the fixed part of its layout. */
function viewOf(data: Uint8Array, fixed: number): DataView {
  if (data.byteLength < fixed) throw new RangeError(`the body has ${data.byteLength} bytes; its layout needs ${fixed}`);
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

/** `L`: log_level, timestamp, message; `C` (tagged): log_level, tag, timestamp, message. */
function logging(data: Uint8Array, tagged: boolean): Record<string, unknown> {
  const at = tagged ? 3 : 1;
  const view = viewOf(data, at + 8);
  const log_level = view.getUint8(0);
  return {
    log_level,
    level: LEVELS[log_level - 0x30] ?? 'UNKNOWN',
    ...(tagged ? { tag: view.getUint16(1, true) } : {}),
    timestamp: Number(view.getBigUint64(at, true)),
    message: text.decode(data.subarray(at + 8)),
  };
}

/** `P`: the key (`type name`, one byte of length first) and the value in that type. */
function parameter(data: Uint8Array): Record<string, unknown> {
  const keyLength = viewOf(data, 1).getUint8(0);
  if (1 + keyLength > data.byteLength) throw new RangeError('the key runs past the body');
  const key = text.decode(data.subarray(1, 1 + keyLength));
  const field = parseFieldDefinition(key);
  if (field === undefined || field.isComplex) throw new RangeError(`"${key}" is not a ULog type and name`);
  const value = parseBasicFieldValue(field, viewOf(data, 1 + keyLength), 1 + keyLength);
  return { name: field.name, type: field.type, value };
}
