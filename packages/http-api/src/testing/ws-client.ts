/** The part of a WebSocket the tests use: the same code drives `ws` (Node) and the global WebSocket (Bun, Deno). */
export interface TestSocket {
  binaryType: string;
  readyState: number;
  protocol: string;
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: { code: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  send(data: string | Uint8Array): void;
  close(code?: number): void;
}

type SocketCtor = new (url: string, protocols?: string | string[], options?: unknown) => TestSocket;

/** `ws` in Node (20 has no global WebSocket), the built-in one elsewhere. */
export async function socketClass(): Promise<SocketCtor> {
  const g = globalThis as { Bun?: unknown; Deno?: unknown; WebSocket?: SocketCtor };
  if ((g.Bun !== undefined || g.Deno !== undefined) && g.WebSocket) return g.WebSocket;
  const ws = (await import('ws')) as unknown as { WebSocket: SocketCtor };
  return ws.WebSocket;
}

export type Received = { kind: 'text'; json: Record<string, unknown> } | { kind: 'binary'; bytes: Uint8Array };

/** A connected socket whose messages queue up for `next()`. */
export class QueuedSocket {
  readonly received: Received[] = [];
  private waiters: Array<() => void> = [];
  closed = false;
  closeCode = 0;

  private constructor(readonly socket: TestSocket) {
    socket.onmessage = (event) => {
      const data = event.data;
      if (typeof data === 'string')
        this.received.push({ kind: 'text', json: JSON.parse(data) as Record<string, unknown> });
      else
        this.received.push({
          kind: 'binary',
          bytes:
            data instanceof ArrayBuffer
              ? new Uint8Array(data)
              : new Uint8Array(
                  (data as Uint8Array).buffer,
                  (data as Uint8Array).byteOffset,
                  (data as Uint8Array).byteLength,
                ),
        });
      this.wake();
    };
    socket.onclose = (event) => {
      this.closed = true;
      this.closeCode = event.code;
      this.wake();
    };
  }

  static async connect(url: string, protocols?: string[], options?: unknown): Promise<QueuedSocket> {
    const Ctor = await socketClass();
    const socket = options === undefined ? new Ctor(url, protocols) : new Ctor(url, protocols, options);
    socket.binaryType = 'arraybuffer';
    const queued = new QueuedSocket(socket);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error(`cannot connect to ${url}`));
      const prevClose = socket.onclose;
      socket.onclose = (event) => {
        prevClose?.(event);
        reject(new Error(`closed while connecting (${event.code})`));
      };
    });
    socket.onclose = (event) => {
      queued.closed = true;
      queued.closeCode = event.code;
      queued.wake();
    };
    return queued;
  }

  send(value: unknown): void {
    this.socket.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Removes and returns the first message matching `match`, waiting up to `timeoutMs`. */
  async next(match: (m: Received) => boolean = () => true, timeoutMs = 5000): Promise<Received> {
    const index = await this.indexOf(match, timeoutMs);
    return this.received.splice(index, 1)[0]!;
  }

  /**
   * Removes and returns the first message matching `match` and everything received before it, in order (for tests
   * about what arrives before and after an event).
   */
  async until(match: (m: Received) => boolean, timeoutMs = 5000): Promise<Received[]> {
    const index = await this.indexOf(match, timeoutMs);
    return this.received.splice(0, index + 1);
  }

  private async indexOf(match: (m: Received) => boolean, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex(match);
      if (index >= 0) return index;
      if (this.closed) throw new Error('socket closed while waiting');
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out; queued: ${JSON.stringify(this.received.slice(0, 5).map((m) => (m.kind === 'text' ? m.json : `binary ${m.bytes.length}`)))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Next JSON event with `event === name` (and optional extra check). */
  async event(
    name: string,
    check: (json: Record<string, unknown>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<Record<string, unknown>> {
    const m = await this.next((r) => r.kind === 'text' && r.json['event'] === name && check(r.json), timeoutMs);
    return (m as { json: Record<string, unknown> }).json;
  }

  /** Forgets queued JSON events (binary frames stay), so the next `event()` sees only what follows. */
  clearEvents(): void {
    for (let i = this.received.length - 1; i >= 0; i--)
      if (this.received[i]!.kind === 'text') this.received.splice(i, 1);
  }

  binaries(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = 0; i < this.received.length; ) {
      const m = this.received[i]!;
      if (m.kind === 'binary') {
        out.push(m.bytes);
        this.received.splice(i, 1);
      } else i++;
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.socket.close(1000);
    const deadline = Date.now() + 2000;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
