import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { serve, type RunningServer } from './index.js';
import { buildFixtureRoot, type FixtureRoot } from './testing/fixtures.js';

// The WebSocket routes accept the bearer token in the Authorization header of the upgrade request. Bun's and Deno's
// WebSocket clients cannot set headers, so this check sends the upgrade request itself over a plain TCP socket and
// reads the status line: it runs the same on every runtime (the server under test is this runtime's adapter).
const TOKEN = 'h3ader-token';
let fx: FixtureRoot;
let locked: RunningServer;

before(async () => {
  fx = await buildFixtureRoot();
  locked = await serve({ root: fx.root, port: 0, token: TOKEN });
});
after(async () => {
  await locked?.close();
  fx?.cleanup();
});

/** Sends a WebSocket upgrade request for `path` with `headers`; resolves with the response's status code. */
function upgradeStatus(path: string, headers: Record<string, string>): Promise<number> {
  const { port, hostname } = new URL(locked.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname });
    let head = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to the upgrade of ${path}`));
    }, 10_000);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head.slice(0, end));
      if (status) resolve(Number(status[1]));
      else reject(new Error(`not an HTTP status line: ${head.slice(0, end)}`));
    });
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

describe('WebSocket upgrade with the token in the Authorization header (every runtime)', () => {
  const path = '/v1/bags/drive.vdb/replay';

  test('the right bearer token in the header switches protocols', async () => {
    assert.equal(await upgradeStatus(path, { Authorization: `Bearer ${TOKEN}` }), 101);
  });

  test('no header, a wrong token or another scheme is refused with 401', async () => {
    assert.equal(await upgradeStatus(path, {}), 401);
    assert.equal(await upgradeStatus(path, { Authorization: 'Bearer wrong' }), 401);
    assert.equal(await upgradeStatus(path, { Authorization: `Basic ${TOKEN}` }), 401);
    assert.equal(await upgradeStatus(`${path}?token=wrong`, {}), 401);
  });
});
