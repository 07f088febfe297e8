import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { FOXGLOVE_SUBPROTOCOL, serve, type RunningServer } from './index.js';
import { buildFixtureRoot, type FixtureRoot } from './testing/fixtures.js';
import { openDescriptors } from './testing/open-files.js';
import { rawGet, upgradeHeaders, type RawResponse } from './testing/raw-http.js';

// Requests at the edge of HTTP: HEAD on a streaming route, malformed Host headers, odd WebSocket handshakes. Each
// must get the API's typed JSON answer on every runtime, and cost the server nothing once answered.

let fx: FixtureRoot;
let server: RunningServer;

before(async () => {
  fx = await buildFixtureRoot();
  // No reader cache: an open descriptor on a bag is then a reader some request still holds.
  server = await serve({ root: fx.root, port: 0, readerCache: 0 });
});
after(async () => {
  await server?.close();
  fx?.cleanup();
});

const host = () => `127.0.0.1:${server.port}`;
const raw = (path: string, headers: Record<string, string>) => rawGet(server.port, path, headers);

function errorOf(response: RawResponse): { code: string; message: string } {
  assert.match(response.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(new TextDecoder().decode(response.body)) as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(body), ['error']);
  return body.error;
}

const waitFor = async (check: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return check();
};

describe('requests at the edge of HTTP', () => {
  test('HEAD on a streaming route answers its headers and releases the stream (no open file left)', async (t) => {
    const bag = join(fx.root, 'big.vcap');
    if (openDescriptors(bag) === undefined) return t.skip('no /proc here');
    const path = '/v1/bags/big.vcap/messages?format=binary';
    const get = await fetch(server.url + path);
    const type = get.headers.get('content-type');
    await get.arrayBuffer();
    for (let i = 0; i < 8; i++) {
      const head = await fetch(server.url + path, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-type'), type);
      assert.equal((await head.arrayBuffer()).byteLength, 0);
    }
    // Each HEAD used to leave its reader (an open file and its buffered chunks) behind, for good.
    assert.ok(await waitFor(() => openDescriptors(bag) === 0, 5000), `${openDescriptors(bag)} descriptors left open`);
  });

  test('a malformed Host is refused with 421 MISDIRECTED_REQUEST, never a 500', async () => {
    const port = server.port;
    for (const name of [`127.0.0.1:${port}.`, '127.0.0.1:99999', 'a b', 'x:1:1', `127.0.0.1:${port}/x`, `u@evil.com`]) {
      const response = await raw('/v1/health', { Host: name });
      assert.equal(response.status, 421, name);
      assert.equal(errorOf(response).code, 'MISDIRECTED_REQUEST', name);
    }
  });

  test('requests the HTTP parser refuses (headers too large, a malformed header) are 4xx; on Node with a JSON body', async () => {
    // Node's parser answered them with an empty body; Bun's and Deno's parsers still do (they never reach the app).
    const node = typeof process !== 'undefined' && !('Bun' in globalThis) && !('Deno' in globalThis);
    for (const [path, headers, status] of [
      ['/v1/health', { 'X-Big': 'a'.repeat(100_000) }, 431],
      [`/v1/health?x=${'a'.repeat(100_000)}`, {}, 431],
      ['/v1/health', { 'Content-Length': 'abc' }, 400],
    ] as const) {
      const response = await raw(path, { Host: host(), ...headers });
      assert.ok(response.status >= 400 && response.status < 500, `${response.status}`);
      if (!node) continue;
      assert.equal(response.status, status);
      assert.equal(errorOf(response).code, 'INVALID_ARGUMENT');
    }
  });

  test('the Foxglove socket answers with its subprotocol when a client offers others first', async () => {
    const response = await raw(
      '/v1/bags/drive.vdb/foxglove',
      upgradeHeaders(host(), { 'Sec-WebSocket-Protocol': `x, ${FOXGLOVE_SUBPROTOCOL}` }),
    );
    assert.equal(response.status, 101);
    assert.equal(response.headers['sec-websocket-protocol'], FOXGLOVE_SUBPROTOCOL);
  });

  test('the Foxglove socket reads its query as the HTTP routes do: each parameter once, end not before begin', async () => {
    for (const [query, name] of [
      ['begin=5&end=1', 'end'],
      ['rate=1&rate=2', 'rate'],
      ['begin=1&begin=2', 'begin'],
    ]) {
      const response = await raw(
        `/v1/bags/drive.vdb/foxglove?${query}`,
        upgradeHeaders(host(), { 'Sec-WebSocket-Protocol': FOXGLOVE_SUBPROTOCOL }),
      );
      assert.equal(response.status, 400, query);
      const error = errorOf(response);
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.match(error.message, new RegExp(`"${name}"`), query);
    }
  });

  test('refused WebSocket handshakes answer typed JSON errors (4xx), on every runtime alike', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      [
        'no Connection: Upgrade',
        { ...upgradeHeaders(host(), { 'Sec-WebSocket-Protocol': FOXGLOVE_SUBPROTOCOL }), Connection: 'close' },
        400,
        'INVALID_ARGUMENT',
      ],
      ['no subprotocol', upgradeHeaders(host()), 400, 'INVALID_ARGUMENT'],
      [
        'no key',
        { ...upgradeHeaders(host(), { 'Sec-WebSocket-Protocol': FOXGLOVE_SUBPROTOCOL }), 'Sec-WebSocket-Key': '' },
        400,
        'INVALID_ARGUMENT',
      ],
      [
        'version 8',
        { ...upgradeHeaders(host(), { 'Sec-WebSocket-Protocol': FOXGLOVE_SUBPROTOCOL }), 'Sec-WebSocket-Version': '8' },
        400,
        'INVALID_ARGUMENT',
      ],
      [
        'a bad Host',
        upgradeHeaders('evil.example', { 'Sec-WebSocket-Protocol': FOXGLOVE_SUBPROTOCOL }),
        421,
        'MISDIRECTED_REQUEST',
      ],
    ];
    for (const [what, headers, status, code] of cases) {
      const response = await raw('/v1/bags/drive.vdb/foxglove', headers);
      assert.equal(response.status, status, what);
      assert.equal(errorOf(response).code, code, what);
    }
    const replay = await raw('/v1/bags/drive.vdb/replay', { ...upgradeHeaders(host()), Connection: 'keep-alive' });
    assert.equal(replay.status, 400);
    assert.equal(errorOf(replay).code, 'INVALID_ARGUMENT');
  });
});
