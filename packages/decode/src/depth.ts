/**
 * Nesting limits for decoded payloads. A payload nested thousands of levels deep is data an attacker chose: parsing,
 * converting and printing it recurse (JSON.stringify, protobuf's toJson, a terminal printer), so it would overflow the
 * stack of whoever handles it. Past the limit the payload stays bytes with a reason, like any undecodable payload.
 */
export const DEFAULT_MAX_DEPTH = 256;

/** What a scan of JSON text found before it is parsed. */
export interface JsonScan {
  /** `[`/`{` nest deeper than the limit (counting stopped there). */
  tooDeep: boolean;
  /** An integer literal past ±(2^53 − 1), which `JSON.parse` would round to another integer without a word. */
  unsafeInteger: boolean;
}

/** Past 15 digits an integer may be unsafe (2^53 − 1 has 16); shorter ones never are. */
const SAFE_DIGITS = 15;

/**
 * The deepest `[`/`{` nesting of JSON text and whether it holds an integer too large for a double, counting only
 * what is outside strings; stops once `limit` is passed. Linear and allocation-free, so it runs before `JSON.parse`
 * builds anything.
 */
export function scanJson(text: string, limit: number): JsonScan {
  let depth = 0;
  let inString = false;
  let unsafeInteger = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return { tooDeep: true, unsafeInteger };
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (isDigit(c) && !unsafeInteger) {
      // A number starts here (JSON has no other tokens with digits outside strings): read it whole.
      const start = i;
      while (i + 1 < text.length && isDigit(text.charCodeAt(i + 1))) i++;
      const next = text.charCodeAt(i + 1);
      const fraction = next === 0x2e || next === 0x65 || next === 0x45; // . e E
      const before = text.charCodeAt(start - 1);
      const exponent = before === 0x2e || before === 0x65 || before === 0x45 || before === 0x2b; // after . e E +
      if (!fraction && !exponent && i - start + 1 > SAFE_DIGITS)
        unsafeInteger = !Number.isSafeInteger(Number(text.slice(start, i + 1)));
    }
  }
  return { tooDeep: false, unsafeInteger };
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
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
