import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { serve, type RunningServer } from './index.js';

// Attachments of a foreign bag (an MCAP written by the official Python writer): listed by info, served byte for byte
// by `/attachments/{index}` with their media type and name, whether the pool's workers or the server thread read it.
const expected = JSON.parse(readFileSync(fixturePath('foreign', 'mcap', 'json.mcap.expected.json'), 'utf8')) as {
  attachments: Array<{ name: string; media_type: string; size: number; sha256: string }>;
};
const root = mkdtempSync(join(tmpdir(), 'vlink-attachments-'));
copyFileSync(fixturePath('foreign', 'mcap', 'json.mcap'), join(root, 'json.mcap'));
copyFileSync(fixturePath('foreign', 'mcap', 'ros1.mcap'), join(root, 'plain.mcap'));
const servers: Record<string, RunningServer> = {};
before(async () => {
  servers['pool'] = await serve({ root, port: 0, token: 'secret' });
  servers['thread'] = await serve({ root, port: 0, token: 'secret', workers: 0 });
});
after(async () => {
  for (const server of Object.values(servers)) await server.close();
  rmSync(root, { recursive: true, force: true });
});

const sha256 = (data: ArrayBuffer) => createHash('sha256').update(new Uint8Array(data)).digest('hex');

describe('GET /v1/bags/{id}/attachments/{index}', () => {
  for (const where of ['pool', 'thread']) {
    test(`every attachment, its bytes, media type and name (${where})`, async () => {
      const get = (path: string, token = 'secret') =>
        fetch(servers[where]!.url + path, { headers: { authorization: `Bearer ${token}` } });
      const info = (await (await get('/v1/bags/json.mcap/info')).json()) as { attachments: Array<{ name: string }> };
      assert.deepEqual(
        info.attachments.map((a) => a.name),
        expected.attachments.map((a) => a.name),
      );
      for (const [index, want] of expected.attachments.entries()) {
        const res = await get(`/v1/bags/json.mcap/attachments/${index}`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), want.media_type);
        assert.equal(res.headers.get('content-disposition'), `attachment; filename*=UTF-8''${want.name}`);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
        const body = await res.arrayBuffer();
        assert.equal(body.byteLength, want.size);
        assert.equal(sha256(body), want.sha256);
      }
      const missing = await get(`/v1/bags/json.mcap/attachments/${expected.attachments.length}`);
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
      const none = await get('/v1/bags/plain.mcap/attachments/0');
      assert.equal(none.status, 404, 'a bag without attachments');
      await none.body?.cancel();
      const bad = await get('/v1/bags/json.mcap/attachments/-1');
      assert.equal(bad.status, 400);
      await bad.body?.cancel();
      const anonymous = await get('/v1/bags/json.mcap/attachments/0', 'wrong');
      assert.equal(anonymous.status, 401, 'behind the token like every bag route');
      await anonymous.body?.cancel();
    });
  }

  test('an attachment over the answer limit is a 413 naming it, not read into memory', async () => {
    const small = await serve({ root, port: 0, limits: { maxResponseBytes: 500 } });
    try {
      const res = await fetch(`${small.url}/v1/bags/json.mcap/attachments/1`);
      assert.equal(res.status, 413);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'TOO_LARGE');
      assert.match(body.error.message, /attachment 1 \(blob\.bin\) is 768 bytes/);
      assert.equal((await fetch(`${small.url}/v1/bags/json.mcap/attachments/0`)).status, 200);
    } finally {
      await small.close();
    }
  });
});
