/**
 * JSON text the way VLink writes its manifests: nlohmann `ordered_json::dump(4)`. Keys keep insertion order, every
 * value of an object or array sits on its own line with a 4-space indent, empty containers stay `{}` / `[]`, and
 * doubles always look like doubles (`0.0`, `10.0`, `1e-05`), which `JSON.stringify` would print as `0`, `10`, `0.00001`.
 */

/** A JSON value as `dumpJson` takes it; numbers are integers unless their key is a float key (or not integral). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface DumpOptions {
  /** Spaces per level; nlohmann `dump(4)`. */
  indent?: number;
  /** Keys whose numbers are C++ doubles in VLink (written `0.0`, not `0`). */
  floatKeys?: ReadonlySet<string>;
}

export function dumpJson(value: JsonValue, options: DumpOptions = {}): string {
  const step = ' '.repeat(options.indent ?? 4);
  const floatKeys = options.floatKeys ?? new Set<string>();
  const out: string[] = [];
  write(value, '', false);
  return out.join('');

  function write(v: JsonValue, pad: string, asFloat: boolean): void {
    if (v === null) out.push('null');
    else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
    else if (typeof v === 'number')
      out.push(asFloat || !Number.isInteger(v) ? formatJsonDouble(v) : formatJsonInteger(v));
    else if (typeof v === 'string') out.push(JSON.stringify(v));
    else if (Array.isArray(v)) {
      if (v.length === 0) return void out.push('[]');
      const inner = pad + step;
      out.push('[\n');
      v.forEach((item, i) => {
        out.push(inner);
        write(item, inner, false);
        out.push(i + 1 < v.length ? ',\n' : '\n');
      });
      out.push(pad, ']');
    } else {
      const keys = Object.keys(v);
      if (keys.length === 0) return void out.push('{}');
      const inner = pad + step;
      out.push('{\n');
      keys.forEach((key, i) => {
        out.push(inner, JSON.stringify(key), ': ');
        write(v[key]!, inner, floatKeys.has(key));
        out.push(i + 1 < keys.length ? ',\n' : '\n');
      });
      out.push(pad, '}');
    }
  }
}

function formatJsonInteger(value: number): string {
  // Beyond 2^53 a JS number is still integral; print its digits without an exponent as int64 would.
  return Math.abs(value) < 1e21 ? String(value === 0 ? 0 : value) : BigInt(value).toString();
}

/**
 * nlohmann's `to_chars` for a double: the shortest round-trip digits, placed as `format_buffer` does with
 * min_exp −4 and max_exp 15 (`123.0`, `0.001`, `1e-05`, `1.5e+16`), `-0.0` for negative zero, `null` when not finite.
 */
export function formatJsonDouble(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  const abs = Math.abs(value);
  if (abs === 0) return `${sign}0.0`;
  // toExponential() without digits gives the shortest digits that round-trip, as grisu2 does.
  const [mantissa, exp] = abs.toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const k = digits.length;
  const n = Number(exp) + 1; // position of the decimal point relative to the first digit
  let body: string;
  if (k <= n && n <= 15) body = `${digits}${'0'.repeat(n - k)}.0`;
  else if (0 < n && n <= 15) body = `${digits.slice(0, n)}.${digits.slice(n)}`;
  else if (-4 < n && n <= 0) body = `0.${'0'.repeat(-n)}${digits}`;
  else {
    const e = n - 1;
    const mag = Math.abs(e);
    body = `${digits[0]}${k > 1 ? `.${digits.slice(1)}` : ''}e${e < 0 ? '-' : '+'}${mag < 10 ? `0${mag}` : mag}`;
  }
  return sign + body;
}
