import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { createApp } from './index.js';
import { resolveBagId } from './store/resolve-id.js';

// The bearer-token check and the id rules, case by case (found unpinned by mutation testing).
const TOKEN = 's3cret-token';
const root = mkdtempSync(join(tmpdir(), 'vlink-auth-'));
mkdirSync(join(root, 'day1'));
writeFileSync(join(root, 'day1', 'a.vdb'), 'x');
const app = createApp({ root, token: TOKEN });
after(async () => {
  await app.close();
  rmSync(root, { recursive: true, force: true });
});

async function status(path: string, headers: Record<string, string> = {}) {
  const res = await app.request(path, { headers });
  const body = res.status === 401 ? ((await res.json()) as { error: { message: string } }).error.message : '';
  if (res.status !== 401) await res.body?.cancel();
  return { status: res.status, body, challenge: res.headers.get('www-authenticate') };
}

describe('bearer token: the header', () => {
  test('the token, in any case of "Bearer" and with extra spaces, passes; anything else is 401', async () => {
    for (const header of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}`, `  Bearer ${TOKEN}  `])
      assert.equal((await status('/v1/bags', { authorization: header })).status, 200, header);
    for (const header of [
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      'Bearer ',
      TOKEN,
      `Basic ${TOKEN}`,
    ]) {
      const res = await status('/v1/bags', { authorization: header });
      assert.equal(res.status, 401, header);
      assert.equal(res.challenge, 'Bearer realm="vlink-bag"');
    }
  });

  test('the message says whether the token was missing or wrong', async () => {
    assert.equal((await status('/v1/bags')).body, 'missing bearer token');
    assert.equal((await status('/v1/bags', { authorization: 'Bearer nope' })).body, 'invalid bearer token');
    assert.equal((await status('/v1/bags', { authorization: 'Token nope' })).body, 'missing bearer token');
  });

  test('only /v1/health is open; ?token= counts only on a WebSocket upgrade', async () => {
    assert.equal((await status('/v1/health')).status, 200);
    assert.equal((await status('/v1/health/x')).status, 401);
    assert.equal((await status(`/v1/bags?token=${TOKEN}`)).status, 401);
    // A real handshake: `Upgrade: websocket` and `Connection: upgrade` (http/auth.ts accepts ?token= only then).
    const handshake = { upgrade: 'WebSocket', connection: 'keep-alive, Upgrade' };
    const upgrade = await status(`/v1/bags/day1%2Fa.vdb/replay?token=${TOKEN}`, handshake);
    assert.notEqual(upgrade.status, 401, 'past the token check (no WebSocket adapter here: 501)');
    assert.equal((await status('/v1/bags/day1%2Fa.vdb/replay?token=nope', handshake)).body, 'invalid bearer token');
    // An Upgrade header alone is not a handshake: the token in the URL is ignored there.
    const halfHandshake = await status(`/v1/bags/day1%2Fa.vdb/replay?token=${TOKEN}`, { upgrade: 'websocket' });
    assert.equal(halfHandshake.body, 'missing bearer token');
    // Nor is a handshake on a route that is not a WebSocket endpoint.
    assert.equal((await status(`/v1/bags?token=${TOKEN}`, handshake)).body, 'missing bearer token');
  });

  test('?token= needs all of it: GET, the exact WebSocket path, Upgrade: websocket and Connection: upgrade', async () => {
    const handshake = { upgrade: 'websocket', connection: 'Upgrade' };
    const ws = '/v1/bags/day1%2Fa.vdb/replay';
    // Found unpinned by the second mutation run: each line fails if one condition of the handshake is dropped.
    for (const path of [`/x${ws}`, `${ws}/more`])
      assert.equal((await status(`${path}?token=${TOKEN}`, handshake)).body, 'missing bearer token', path);
    const post = await app.request(`${ws}?token=${TOKEN}`, { method: 'POST', headers: handshake });
    assert.equal(post.status, 401, 'a POST is no handshake');
    await post.body?.cancel();
    const h2c = await status(`${ws}?token=${TOKEN}`, { upgrade: 'h2c', connection: 'Upgrade' });
    assert.equal(h2c.body, 'missing bearer token', 'an upgrade to another protocol');
    assert.notEqual((await status(`${ws}?token=${TOKEN}`, handshake)).status, 401, 'the full handshake passes');
  });

  test('"Bearer" must start the header', async () => {
    assert.equal((await status('/v1/bags', { authorization: `xBearer ${TOKEN}` })).status, 401);
    assert.equal((await status('/v1/bags', { authorization: `Token Bearer ${TOKEN}` })).status, 401);
  });
});

describe('bag ids: only plain relative paths of plain names', () => {
  test('each unsafe shape is NOT_FOUND before the file system is asked; a plain one resolves', () => {
    const notFound = (e: unknown) => (e as { code?: string }).code === 'NOT_FOUND';
    for (const id of [
      '',
      'a'.repeat(4097),
      'day1/a\0.vdb',
      'day1\\a.vdb',
      '/day1/a.vdb',
      'C:day1',
      'c:/x',
      'day1//a.vdb',
      './day1/a.vdb',
      'day1/./a.vdb',
      'day1/../day1/a.vdb',
      'day1/',
    ])
      assert.throws(() => resolveBagId(root, id), notFound, JSON.stringify(id.slice(0, 40)));
    assert.equal(resolveBagId(root, 'day1/a.vdb').size, 1);
    assert.throws(() => resolveBagId(root, 'day1'), notFound, 'a directory');
  });
});
