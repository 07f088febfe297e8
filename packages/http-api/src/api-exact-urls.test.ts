import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';
import { serve } from './index.js';

// Urls that `urls=` cannot name (it splits at commas and trims): `url=` takes each as it is, on every route that
// filters by url.
const dir = mkdtempSync(join(tmpdir(), 'vlink-exact-urls-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const URLS = ['a,b', 'a', 'b', ' padded ', 'padded'];

async function writeBag(): Promise<void> {
  const writer = await BagWriter.create(join(dir, 'odd.vcap'), { syncMode: true });
  for (const [i, url] of URLS.entries())
    for (let k = 0; k < 3; k++)
      writer.push({
        timestamp: 1000 * (i * 3 + k),
        url,
        data: new Uint8Array([i, k]),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
  await writer.close();
}

describe('url= names one url exactly', () => {
  test('messages (pages and streams), timing and density keep exactly the urls named', async () => {
    await writeBag();
    const server = await serve({ root: dir, port: 0 });
    try {
      const get = async (path: string) => {
        const res = await fetch(`${server.url}/v1/bags/odd.vcap/${path}`);
        assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
        return res;
      };
      const pageUrls = async (query: string) => {
        const urls: string[] = [];
        let cursor: string | null = null;
        do {
          const body = (await (await get(`messages?limit=2&${query}${cursor ? `&cursor=${cursor}` : ''}`)).json()) as {
            messages: Array<{ url: string }>;
            next: string | null;
          };
          urls.push(...body.messages.map((m) => m.url));
          cursor = body.next;
        } while (cursor);
        return urls;
      };
      assert.deepEqual(await pageUrls('url=a%2Cb'), ['a,b', 'a,b', 'a,b']);
      assert.deepEqual(await pageUrls('url=%20padded%20'), [' padded ', ' padded ', ' padded ']);
      assert.deepEqual(await pageUrls('url=a%2Cb&url=padded'), ['a,b', 'a,b', 'a,b', 'padded', 'padded', 'padded']);
      // urls= keeps its meaning: split at commas, trimmed.
      assert.deepEqual(new Set(await pageUrls('urls=a%2Cb')), new Set(['a', 'b']));
      assert.deepEqual(new Set(await pageUrls('urls=a&url=a%2Cb')), new Set(['a', 'a,b']));
      const nd = await (await get('messages?format=ndjson&url=%20padded%20')).text();
      assert.deepEqual(
        nd
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).url),
        [' padded ', ' padded ', ' padded '],
      );
      const timing = (await (await get('timing?url=a%2Cb')).json()) as { urls: Array<{ url: string; count: number }> };
      assert.deepEqual(
        timing.urls.map((u) => [u.url, u.count]),
        [['a,b', 3]],
      );
      const density = (await (await get('density?buckets=4&url=%20padded%20')).json()) as {
        total: number;
        urls: Array<{ url: string }>;
      };
      assert.equal(density.total, 3);
      assert.deepEqual(
        density.urls.map((u) => u.url),
        [' padded '],
      );
      // A token is for the query it was issued for: another url is refused.
      const first = (await (await get('messages?limit=1&url=a%2Cb')).json()) as { next: string };
      const res = await fetch(`${server.url}/v1/bags/odd.vcap/messages?limit=1&url=a&cursor=${first.next}`);
      assert.equal(res.status, 400);
    } finally {
      await server.close();
    }
  });
});
