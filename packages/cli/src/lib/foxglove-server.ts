import { BagError, type Info, type SchemaData } from '@vlink/bag';
import type { FoxgloveFeedServer } from '@vlink/bag-server/internal';
import { CliError } from './errors.js';
import type { HostPort } from './parse.js';

/**
 * `play --serve`: the server package's Foxglove WebSocket (`foxglove.websocket.v1`, the protocol and channel offer of
 * `vlink-bag serve`'s `…/foxglove` socket) on `address`, served by the runtime's own listener, which Foxglove Studio,
 * Lichtblick and `vlink-bag record --from` can open. The playback itself (pace, pause, jumps) stays with the CLI,
 * which hands each frame to `send`.
 */
export async function serveFoxglove(
  address: HostPort,
  info: Info,
  schemas: readonly SchemaData[],
  keep?: ReadonlySet<string>,
): Promise<FoxgloveFeedServer> {
  // Loaded on demand (hono and the runtime's server) so plain playback starts fast.
  const { serveFoxgloveFeed } = await import('@vlink/bag-server/internal');
  try {
    return await serveFoxgloveFeed({
      host: address.host,
      port: address.port,
      serverName: `vlink-bag ${info.path}`,
      bag: info.path,
      info,
      schemas,
      ...(keep ? { keep } : {}),
    });
  } catch (error) {
    // The listener's failure (a BagError IO_ERROR naming the address) reads as the CLI's one line; others pass.
    if (!BagError.isInstance(error) || error.code !== 'IO_ERROR') throw error;
    const reason = `cannot listen on ${address.host}:${address.port}: ${listenReason(error)}`;
    throw new CliError(reason, info.path, undefined, { cause: error });
  }
}

/** Why listening failed, as the runtime said it (Node and Bun: `EADDRINUSE`; Deno: `AddrInUse`). */
function listenReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause ?? error;
  const { code, name, message } = (cause ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  if (code === 'EADDRINUSE' || name === 'AddrInUse') return 'address already in use';
  return typeof message === 'string' ? message : String(cause);
}
