import type { Info, SchemaData } from '@vlink/bag';
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
    throw new CliError(
      `cannot listen on ${address.host}:${address.port}: ${listenReason(error)}`,
      info.path,
      undefined,
      {
        cause: error,
      },
    );
  }
}

/** Why listening failed, as the runtime said it (Node and Bun: `EADDRINUSE`; Deno: `AddrInUse`). */
function listenReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause ?? error;
  const { code, name, message } = (cause ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  if (code === 'EADDRINUSE' || name === 'AddrInUse') return 'address already in use';
  return typeof message === 'string' ? message : String(cause);
}
