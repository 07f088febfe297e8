import type { Duplex } from 'node:stream';

/**
 * Node's HTTP parser refuses some requests before any app sees them — headers or a URL past its size limit (431), a
 * malformed request line or header such as `Content-Length: abc` (400) — and answers them with an empty body. These
 * get the API's JSON error body like every other refusal (Bun and Deno answer through the app). A socket that is
 * already gone, or whose response has started, is only closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || started) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const message = tooLarge ? 'request line and headers are too large' : 'malformed HTTP request';
  const body = JSON.stringify({ error: { code: 'INVALID_ARGUMENT', message } });
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
