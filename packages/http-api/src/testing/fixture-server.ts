import { actionText, type Frame } from '@vlink/bag';
import { after, before } from '@vlink/fixtures/test';
import { serve, type RunningServer } from '../index.js';
import { buildFixtureRoot, type FixtureRoot } from './fixtures.js';

/** A server over a fresh fixture root (fixtures.ts), for one test file; set once its `before` hook has run. */
export interface FixtureServer {
  readonly fx: FixtureRoot;
  readonly server: RunningServer;
  get(path: string, init?: RequestInit): Promise<Response>;
  getJson(path: string): Promise<{ status: number; body: Record<string, unknown> & { [k: string]: any } }>;
}

/** Registers the file's before/after hooks: the root is built and served before its tests and removed after. */
export function serveFixtureRoot(): FixtureServer {
  let fx: FixtureRoot | undefined;
  let server: RunningServer | undefined;
  before(async () => {
    fx = await buildFixtureRoot();
    server = await serve({ root: fx.root, port: 0 });
  });
  after(async () => {
    await server?.close();
    fx?.cleanup();
  });
  const get = (path: string, init?: RequestInit) => fetch(server!.url + path, init);
  return {
    get fx() {
      return fx!;
    },
    get server() {
      return server!;
    },
    get,
    async getJson(path) {
      const res = await get(path);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> & { [k: string]: any } };
    },
  };
}

/**
 * A message as the API's JSON/NDJSON must show it, built here from the frame's fields (not by the server's writer):
 * the expectation the message tests compare against.
 */
export function expectedLine(f: Frame): string {
  return JSON.stringify({
    timestamp: f.timestamp,
    ...(f.publishTime !== undefined ? { publishTime: f.publishTime } : {}),
    url: f.url,
    action: actionText(f.actionType),
    serType: f.serType,
    schemaType: f.schemaType,
    size: f.data.length,
    data: Buffer.from(f.data).toString('base64'),
  });
}
