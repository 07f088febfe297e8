import {
  actionText,
  isRequestAction,
  isRpcAction,
  resolveSchemaType,
  SchemaType,
  schemaTypeLabel,
  type ActionType,
} from '@vlink/bag-core';

/** Stored action text by `ActionType` value (§10.2), for the hot path. */
export const ACTION_TEXT: readonly string[] = Array.from({ length: 9 }, (_, i) => actionText(i as ActionType));

/** The per-file schema dedupe key: name + 0x1F + family label (format reference §2.5). */
export function schemaKey(name: string, family: SchemaType): string {
  return `${name}\x1f${schemaTypeLabel(family)}`;
}

/** `serForAction` without the helper's extra checks; the action is already normalised. */
export function serForActionFast(ser: string, action: ActionType): string {
  if (!isRpcAction(action)) return ser;
  const bar = ser.indexOf('|');
  if (bar < 0) return ser;
  return isRequestAction(action) ? ser.slice(0, bar) : ser.slice(bar + 1);
}

/**
 * The url's family for this message: the explicit type, else the one its ser implies. For RPC `Req|Resp`, both
 * halves are resolved and a disagreement makes the family unknown (format reference §2.6).
 */
export function urlFamily(ser: string, explicit: SchemaType, action: ActionType): SchemaType {
  const bar = isRpcAction(action) ? ser.indexOf('|') : -1;
  if (bar < 0) return resolveSchemaType(explicit, ser);
  const req = resolveSchemaType(explicit, ser.slice(0, bar));
  const resp = resolveSchemaType(explicit, ser.slice(bar + 1));
  return req === resp ? req : SchemaType.Unknown;
}
