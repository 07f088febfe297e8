import assert from 'node:assert/strict';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag';
import { createApp, serve, type RunningServer } from './index.js';
import { buildFixtureRoot, type FixtureRoot } from './testing/fixtures.js';
import { QueuedSocket } from './testing/ws-client.js';

const TOKEN = 's3cret-token';
let fx: FixtureRoot;
let open: RunningServer;
let locked: RunningServer;

before(async () => {
  fx = await buildFixtureRoot();
  open = await serve({ root: fx.root, port: 0 });
  locked = await serve({ root: fx.root, port: 0, token: TOKEN });
});
after(async () => {
  await open?.close();
  await locked?.close();
  fx?.cleanup();
});

async function error(res: Response): Promise<{ code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string }; stack?: unknown };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
  assert.ok(!body.error.message.includes(fx.root), `server path leaked: ${body.error.message}`);
  assert.ok(!/\n\s+at /.test(body.error.message), 'stack leaked');
  return body.error;
}

describe('security and bad input', () => {
  test('ids cannot leave the root', async () => {
    for (const id of [
      '..%2Foutside%2Fsecret.vdb',
      '%2E%2E%2Foutside%2Fsecret.vdb',
      '..%2F..%2F..%2Fetc%2Fpasswd',
      encodeURIComponent(`${fx.outside}/secret.vdb`),
      'escape.vdb',
      'runs%2F..%2F..%2Foutside%2Fsecret.vdb',
      '.%2Fdrive.vdb',
      'dir.vdb',
      'missing.vdb',
      'drive.vdb%00',
    ]) {
      const res = await fetch(`${open.url}/v1/bags/${id}/info`);
      assert.equal(res.status, 404, id);
      assert.equal((await error(res)).code, 'NOT_FOUND');
    }
    const alias = await fetch(`${open.url}/v1/bags/alias.vdb/info`);
    assert.equal(alias.status, 200, 'a symlink that stays inside the root is fine');
    await alias.body?.cancel();
  });

  test('unsupported and corrupt files answer 4xx with a code, never a stack', async () => {
    const txt = await fetch(`${open.url}/v1/bags/notes.txt/info`);
    assert.equal(txt.status, 415);
    assert.equal((await error(txt)).code, 'UNSUPPORTED_FORMAT');
    const bad = await fetch(`${open.url}/v1/bags/bad.vdb/messages`);
    assert.ok(bad.status >= 400 && bad.status < 500, String(bad.status));
    const code = (await error(bad)).code;
    assert.ok(['CORRUPT_FILE', 'CORRUPT_DATA', 'VERSION_MISMATCH', 'UNSUPPORTED_FORMAT'].includes(code), code);
  });

  test('malformed query values answer 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['begin=abc', 'begin'],
      ['end=-5', 'end'],
      ['begin=500&end=100', 'end'],
      ['limit=ten', 'limit'],
      ['format=xml', 'format'],
      ['decode=maybe', 'decode'],
      ['cursor=%25%25%25', 'cursor'],
      ['cursor=eyJ2IjoxfQ', 'cursor'],
      ['decode=true&format=binary', 'decode'],
      ['jsonNames=true', 'jsonNames'],
      ['decode=true&jsonNames=yes', 'jsonNames'],
    ];
    for (const [query, name] of cases) {
      const res = await fetch(`${open.url}/v1/bags/drive.vdb/messages?${query}`);
      assert.equal(res.status, 400, query);
      const e = await error(res);
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.ok(e.message.includes(`"${name}"`), `${query}: ${e.message}`);
    }
    const timing = await fetch(`${open.url}/v1/bags/drive.vdb/timing?factor=x`);
    assert.equal(timing.status, 400);
    assert.ok((await error(timing)).message.includes('"factor"'));
  });

  test('a cursor is bound to its bag and its query', async () => {
    const page = (await (await fetch(`${open.url}/v1/bags/drive.vdb/messages?limit=2`)).json()) as { next: string };
    const other = await fetch(`${open.url}/v1/bags/proto.vdb/messages?cursor=${page.next}`);
    assert.equal(other.status, 400);
    assert.ok((await error(other)).message.includes('"cursor"'));
    const mismatch = await fetch(`${open.url}/v1/bags/drive.vdb/messages?cursor=${page.next}&begin=5`);
    assert.equal(mismatch.status, 400);
    await mismatch.body?.cancel();
  });

  test('read-only: no method but GET reaches a handler', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(`${open.url}/v1/bags/drive.vdb/info`, { method });
      assert.equal(res.status, 404, method);
      await res.body?.cancel();
    }
  });

  test('token: health is open, everything else needs the bearer token', async () => {
    assert.equal((await fetch(`${locked.url}/v1/health`)).status, 200);
    const missing = await fetch(`${locked.url}/v1/bags`);
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get('www-authenticate') ?? '', /Bearer/);
    assert.equal((await error(missing)).code, 'UNAUTHORIZED');
    const wrong = await fetch(`${locked.url}/v1/bags`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const query = await fetch(`${locked.url}/v1/bags?token=${TOKEN}`);
    assert.equal(query.status, 401, '?token= is for WebSockets only');
    await query.body?.cancel();
    for (const path of [
      '/v1/bags',
      '/v1/bags/drive.vdb/info',
      '/v1/openapi.json',
      '/v1/bags/drive.vdb/messages?format=ndjson',
    ]) {
      const ok = await fetch(`${locked.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.status, 200, path);
      await ok.body?.cancel();
    }
    assert.equal((await fetch(`${locked.url}/v1/openapi.json`)).status, 401);
  });

  test('token: WebSockets need the header or ?token=', async () => {
    await assert.rejects(QueuedSocket.connect(`${locked.url.replace('http', 'ws')}/v1/bags/drive.vdb/replay`));
    await assert.rejects(
      QueuedSocket.connect(`${locked.url.replace('http', 'ws')}/v1/bags/drive.vdb/replay?token=wrong`),
    );
    const ws = await QueuedSocket.connect(
      `${locked.url.replace('http', 'ws')}/v1/bags/drive.vdb/replay?token=${TOKEN}`,
    );
    assert.equal((await ws.event('status')).status, 'stopped');
    await ws.close();
    // Bun's and Deno's WebSocket clients cannot set headers: ws-header-auth.test.ts checks the header on every runtime.
    if (!(globalThis as { Bun?: unknown; Deno?: unknown }).Bun && !(globalThis as { Deno?: unknown }).Deno) {
      const viaHeader = await QueuedSocket.connect(
        `${locked.url.replace('http', 'ws')}/v1/bags/drive.vdb/replay`,
        undefined,
        { headers: { authorization: `Bearer ${TOKEN}` } },
      );
      assert.equal((await viaHeader.event('status')).status, 'stopped');
      await viaHeader.close();
    }
  });

  test('a non-loopback host without a token is refused; CORS is off unless configured', async () => {
    await assert.rejects(
      serve({ root: fx.root, host: '0.0.0.0', port: 0 }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT',
    );
    const plain = await fetch(`${open.url}/v1/health`, { headers: { origin: 'http://example.test' } });
    assert.equal(plain.headers.get('access-control-allow-origin'), null);
    await plain.body?.cancel();
    const app = createApp({ root: fx.root, cors: ['http://example.test'], token: TOKEN });
    try {
      const preflight = await app.request('/v1/bags', {
        method: 'OPTIONS',
        headers: {
          origin: 'http://example.test',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://example.test');
      const res = await app.request('/v1/health', { headers: { origin: 'http://example.test' } });
      assert.equal(res.headers.get('access-control-allow-origin'), 'http://example.test');
    } finally {
      await app.close();
    }
  });

  test('WebSocket routes without an upgrade answer 426; without an adapter 501', async () => {
    const res = await fetch(`${open.url}/v1/bags/drive.vdb/replay`);
    assert.equal(res.status, 426);
    assert.equal((await error(res)).code, 'UPGRADE_REQUIRED');
    const app = createApp({ root: fx.root });
    try {
      const bare = await app.request('/v1/bags/drive.vdb/replay', { headers: { upgrade: 'websocket' } });
      assert.equal(bare.status, 501);
    } finally {
      await app.close();
    }
  });
});
