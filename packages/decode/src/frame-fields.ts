/*
 * The few VLink enum values and the RPC ser rule the decoder needs, as plain numbers and a copy of core's
 * `serForAction`: the web player bundles this package, and importing @vlink/bag-core's root there would drag the
 * backends (and their `node:*` imports) into the browser. `frame-fields.test.ts` checks them against core.
 */

/** `SchemaType.Unknown`. */
export const SCHEMA_UNKNOWN = 0;
/** `SchemaType.Raw`. */
export const SCHEMA_RAW = 1;
/** `SchemaType.ZeroCopy`. */
export const SCHEMA_ZEROCOPY = 2;
/** `SchemaType.Protobuf`. */
export const SCHEMA_PROTOBUF = 3;
/** `SchemaType.Flatbuffers`. */
export const SCHEMA_FLATBUFFERS = 4;
/** `SchemaType.Cdr`. */
export const SCHEMA_CDR = 5;

/** `ActionType.ClientRequest`: RPC channels advertise their request type. */
export const ACTION_CLIENT_REQUEST = 1;

/**
 * RPC urls (actions C/Req, C/Resp, S/Req, S/Resp = 1…4) store `Req|Resp` as their ser; requests use the left part,
 * responses the right. Other actions use the whole string.
 */
export function serForAction(ser: string, action: number): string {
  if (action < 1 || action > 4) return ser;
  const bar = ser.indexOf('|');
  if (bar < 0) return ser;
  return action === 1 || action === 3 ? ser.slice(0, bar) : ser.slice(bar + 1);
}
