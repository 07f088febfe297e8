import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagWriter, registerBackend } from '@vlink/bag';
import { memoryBackend, sampleFrames } from '@vlink/bag-core/testing';
import { serve, type RunningServer } from './index.js';
import { hangBackend } from './testing/hang-backend.js';

// The listing opens many bags per worker job (PooledBagWork.facts). A bag whose open never returns hangs that job's
// worker: the listing must still name that bag alone (TIMEOUT, then quarantined as on every route), list every other
// bag of the job with its count, and the server must keep answering meanwhile.

registerBackend(memoryBackend);
registerBackend(hangBackend);

// Generous: every good bag of the listing must open within it on a loaded CI machine.
const OPEN_DEADLINE_MS = 3000;
const base = mkdtempSync(join(tmpdir(), 'vlink-list-hang-'));
const root = join(base, 'root');
const GOOD = ['a1', 'a2', 'a3', 'a4', 'a5', 'z1', 'z2', 'z3'].map((name) => `${name}.memjson`);
let server: RunningServer;

before(async () => {
  mkdirSync(root);
  for (const [i, id] of GOOD.entries()) {
    const writer = await BagWriter.create(join(root, id), { syncMode: true });
    for (const frame of sampleFrames(2 + i)) writer.push({ ...frame });
    await writer.close();
  }
  server = await serve({ root, port: 0, workers: 2, deadlines: { openMs: OPEN_DEADLINE_MS, requestMs: 10_000 } });
  // Start the workers: the listing's first job should not be the one waiting for them.
  const info = await fetch(`${server.url}/v1/bags/a1.memjson/info`);
  assert.equal(info.status, 200, await info.text());
});
after(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

interface Listed {
  bags: Array<{ id: string; messageCount: number | null; error?: { code: string; message: string } }>;
}

async function list(): Promise<Listed> {
  const res = await fetch(`${server.url}/v1/bags`);
  assert.equal(res.status, 200);
  return (await res.json()) as Listed;
}

/** Health answers (200) again and again until `during` settles; nothing is timed. */
async function keepsAnswering<T>(during: Promise<T>): Promise<T> {
  let done = false;
  const result = during.finally(() => (done = true));
  let rounds = 0;
  do {
    const health = await fetch(`${server.url}/v1/health`);
    assert.equal(health.status, 200);
    await health.text();
    rounds++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (!done);
  assert.ok(rounds >= 1);
  return result;
}

function assertOthersCounted(listed: Listed): void {
  for (const [i, id] of GOOD.entries()) {
    const bag = listed.bags.find((b) => b.id === id);
    assert.deepEqual([bag?.messageCount, bag?.error], [2 + i, undefined], id);
  }
}

describe('GET /v1/bags with a bag that hangs its worker', () => {
  test('that bag alone is listed with TIMEOUT, then as quarantined; every other bag with its count', async () => {
    // Sorted between a5 and z1: the worker job of the listing opens five bags before it and three after it.
    writeFileSync(join(root, 'stuck.hang'), 'a bag whose backend never returns from open');
    const first = await keepsAnswering(list());
    const stuck = first.bags.find((b) => b.id === 'stuck.hang');
    assert.equal(stuck?.messageCount, null);
    assert.equal(stuck?.error?.code, 'TIMEOUT');
    assert.match(stuck?.error?.message ?? '', /"stuck\.hang"/);
    assertOthersCounted(first);
    // The stuck worker does not answer its cancel: after the grace period (5 s) it is replaced and the bag refused
    // at once, without a job (a listing before that would hang another worker on it, as any route would).
    await keepsAnswering(new Promise((resolve) => setTimeout(resolve, 7000)));
    const listed = await keepsAnswering(list());
    assert.match(listed.bags.find((b) => b.id === 'stuck.hang')?.error?.message ?? '', /made a worker hang/);
    assertOthersCounted(listed);
    rmSync(join(root, 'stuck.hang'));
    assert.deepEqual(
      (await list()).bags.map((b) => b.id),
      GOOD,
    );
  });
});
