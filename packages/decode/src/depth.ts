/**
 * Nesting limits for decoded payloads. A payload nested thousands of levels deep is data an attacker chose: parsing,
 * converting and printing it recurse (JSON.stringify, protobuf's toJson, a terminal printer), so it would overflow the
 * stack of whoever handles it. Past the limit the payload stays bytes with a reason, like any undecodable payload.
 */
export const DEFAULT_MAX_DEPTH = 256;

/**
 * The deepest `[`/`{` nesting of JSON text, counting only brackets outside strings; stops counting once `limit` is
 * passed. Linear and allocation-free, so it runs before `JSON.parse` builds anything.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Whether a decoded value (plain objects and arrays) nests deeper than `limit`; iterative, so it cannot overflow. */
export function valueDepthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
