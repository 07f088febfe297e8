import { join } from 'node:path';
import { after, before } from '@vlink/fixtures/test';
import type { Frame } from '@vlink/bag';
import { serve, type RunningServer } from '../index.js';
import { buildFixtureRoot, readAll, type FixtureRoot } from './fixtures.js';
import { QueuedSocket } from './ws-client.js';

export interface ReplayServer {
  readonly server: RunningServer;
  /** Every frame of the fixture's `drive.vdb`, as a reader returns them. */
  readonly frames: Frame[];
  /** Opens the replay socket of a bag and returns it with the status event every replay starts with. */
  open(id?: string): Promise<{ ws: QueuedSocket; status: Record<string, unknown> }>;
}

/**
 * For a replay test file: serves the fixture root from before its first test and, after its last, closes every
 * socket `open` made, the server and the fixture.
 */
export function replayServer(): ReplayServer {
  let fx: FixtureRoot | undefined;
  let server: RunningServer | undefined;
  let frames: Frame[] = [];
  const sockets: QueuedSocket[] = [];
  before(async () => {
    fx = await buildFixtureRoot();
    server = await serve({ root: fx.root, port: 0 });
    frames = await readAll(join(fx.root, 'drive.vdb'));
  });
  after(async () => {
    for (const ws of sockets) await ws.close();
    await server?.close();
    fx?.cleanup();
  });
  return {
    get server() {
      if (!server) throw new Error('the replay server starts before the first test');
      return server;
    },
    get frames() {
      return frames;
    },
    async open(id = 'drive.vdb') {
      const ws = await QueuedSocket.connect(
        `${this.server.url.replace('http', 'ws')}/v1/bags/${encodeURIComponent(id)}/replay`,
      );
      sockets.push(ws);
      return { ws, status: await ws.event('status') };
    },
  };
}
