import { connect } from 'node:net';

/** A response as it came over the wire: what `fetch` hides (a forged Host, a 101, how the connection ended). */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body bytes after the head, still chunk-encoded when `chunked`. */
  raw: Uint8Array;
  /** The body, de-chunked when it was chunked. */
  body: Uint8Array;
  /** For a chunked body: whether its terminating zero-length chunk arrived (a complete body). */
  complete: boolean;
  /**
   * How the response ended: the server closed or reset the connection, or the response was complete by its own
   * framing while the connection stayed open (`complete`; a 101 is `upgraded`): the test then closes it.
   */
  ended: 'closed' | 'reset' | 'upgraded' | 'complete';
}

/**
 * Sends one GET over a fresh TCP connection with exactly the headers given (`Host` included: fetch would not let a
 * test forge it) and reads until the server closes. Node's `net` works on Node, Bun and Deno.
 */
export function rawGet(port: number, path: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const parts: Uint8Array[] = [];
    let settled = false;
    const finish = (ended: RawResponse['ended']) => {
      if (settled) return;
      settled = true;
      try {
        resolve(parse(concat(parts), ended));
      } catch (error) {
        reject(error);
      }
    };
    socket.on('connect', () => {
      const lines = [`GET ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      if (!Object.keys(headers).some((k) => k.toLowerCase() === 'connection')) lines.push('Connection: close');
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    socket.on('data', (data: Uint8Array) => {
      parts.push(new Uint8Array(data));
      const done = framedEnd(concat(parts));
      if (done) {
        finish(done);
        socket.destroy();
      }
    });
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (parts.length > 0 || error.code === 'ECONNRESET') finish('reset');
      else if (!settled) {
        settled = true;
        reject(error);
      }
    });
    socket.setTimeout(30_000, () => {
      socket.destroy();
      if (!settled) {
        settled = true;
        reject(new Error(`no end of the response to GET ${path} within 30 s`));
      }
    });
  });
}

/** The headers of a WebSocket handshake (a fixed key: the server only has to answer it). */
export function upgradeHeaders(host: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    Host: host,
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version': '13',
    ...extra,
  };
}

/**
 * Whether the bytes so far hold a whole response by its own framing (a server may keep the connection open after
 * it, e.g. after refusing an upgrade): `upgraded` for a 101, `complete` for a full Content-Length or chunked body.
 */
function framedEnd(bytes: Uint8Array): 'upgraded' | 'complete' | undefined {
  const text = new TextDecoder('latin1').decode(bytes);
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  if (/^HTTP\/1\.[01] 101 /.test(text)) return 'upgraded';
  const response = parse(bytes, 'complete');
  const length = response.headers['content-length'];
  if (length !== undefined) return response.raw.length >= Number(length) ? 'complete' : undefined;
  if (response.headers['transfer-encoding']?.toLowerCase() === 'chunked')
    return response.complete ? 'complete' : undefined;
  return undefined;
}

function parse(bytes: Uint8Array, ended: RawResponse['ended']): RawResponse {
  const text = new TextDecoder('latin1').decode(bytes);
  const end = text.indexOf('\r\n\r\n');
  if (end < 0)
    throw new Error(`no complete response head in ${bytes.length} bytes: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  const raw = bytes.subarray(end + 4);
  if (headers['transfer-encoding']?.toLowerCase() !== 'chunked')
    return { status, headers, raw, body: raw, complete: true, ended };
  const { body, complete } = dechunk(raw);
  return { status, headers, raw, body, complete, ended };
}

/** Decodes a chunked body; `complete` only when the zero-length last chunk is there. */
export function dechunk(raw: Uint8Array): { body: Uint8Array; complete: boolean } {
  const out: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = indexOfCrlf(raw, at);
    if (lineEnd < 0) return { body: concat(out), complete: false };
    const size = Number.parseInt(new TextDecoder().decode(raw.subarray(at, lineEnd)), 16);
    if (!Number.isFinite(size)) return { body: concat(out), complete: false };
    if (size === 0) return { body: concat(out), complete: true };
    const start = lineEnd + 2;
    if (start + size > raw.length) {
      out.push(raw.subarray(start));
      return { body: concat(out), complete: false };
    }
    out.push(raw.subarray(start, start + size));
    at = start + size + 2;
  }
}

function indexOfCrlf(bytes: Uint8Array, from: number): number {
  for (let i = from; i + 1 < bytes.length; i++) if (bytes[i] === 13 && bytes[i + 1] === 10) return i;
  return -1;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
