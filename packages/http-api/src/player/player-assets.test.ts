import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { Hono } from 'hono';
import { serve, type RunningServer } from '../index.js';
import { toErrorResponse } from '../http/errors.js';
import { buildFixtureRoot, type FixtureRoot } from '../testing/fixtures.js';
import { registerPlayer } from './player-assets.js';

let fx: FixtureRoot;
let guarded: RunningServer;
before(async () => {
  fx = await buildFixtureRoot();
  guarded = await serve({ root: fx.root, port: 0, token: 'sesame' });
});
after(async () => {
  await guarded?.close();
  fx?.cleanup();
});

describe('player routes', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'vlink-player-'));
    mkdirSync(join(dir, 'web', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'web', 'index.html'), '<!doctype html><title>player</title>');
    writeFileSync(join(dir, 'web', 'assets', 'index-abc123.js'), 'console.log(1)');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const appFor = (web: string) => {
    const app = new Hono();
    app.onError((error, c) => {
      const { status, body } = toErrorResponse(error);
      return c.json(body, status as 400);
    });
    registerPlayer(app, web);
    return app;
  };

  test('/ and /player serve the page; hashed assets are immutable; nothing else is reachable', async () => {
    const app = appFor(join(dir, 'web'));
    for (const path of ['/', '/player', '/player/']) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type')!, /^text\/html/);
      assert.match(res.headers.get('content-security-policy')!, /default-src 'self'/);
      assert.equal(await res.text(), '<!doctype html><title>player</title>');
    }
    const js = await app.request('/player/assets/index-abc123.js');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type')!, /^text\/javascript/);
    assert.match(js.headers.get('cache-control')!, /immutable/);
    for (const path of [
      '/player/assets/nope.js',
      '/player/../index.html',
      '/player/%2e%2e/web/index.html',
      '/player/assets',
    ]) {
      assert.equal((await app.request(path)).status, 404, path);
    }
  });

  test('without a build, / keeps pointing at the docs and /player says how to build', async () => {
    const app = appFor(join(dir, 'missing'));
    const root = await app.request('/');
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/v1/docs');
    const player = await app.request('/player');
    assert.equal(player.status, 501);
    assert.match(((await player.json()) as { error: { message: string } }).error.message, /npm run build/);
  });

  test('the page is public on a server with a token; the API is not', async () => {
    const root = await fetch(`${guarded.url}/`, { redirect: 'manual' });
    assert.ok(root.status === 200 || root.status === 302, String(root.status));
    await root.body?.cancel();
    const bags = await fetch(`${guarded.url}/v1/bags`);
    assert.equal(bags.status, 401);
    await bags.body?.cancel();
  });
});
