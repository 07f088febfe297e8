import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { prng } from '@vlink/fixtures/random';
import { after, before, describe, test, testSeed } from '@vlink/fixtures/test';
import { fixturePath } from '@vlink/fixtures';
import { createApp, type BagApp } from './index.js';
import { buildFixtureRoot, type FixtureRoot } from './testing/fixtures.js';

// Requests nobody wrote by hand: every GET route the API describes (its own openapi.json, so a new route or parameter
// is fuzzed without touching this file), on every served bag (ours and the foreign formats), with parameter values
// the schema allows (enums, numbers, the bag's urls, `next` tokens of earlier answers) and, one in five, hostile ones
// (empty, negative, NaN, 1e308, past 2^53, a lone surrogate, `../`, 5,000 characters, names of other enums). Each
// answer must be a success or the API's typed error (`{ error: { code, message } }`, never a 500: an error nobody
// caught), name no server path, and come at once.

const SEED = testSeed('API request fuzz', 20261205);
const REQUESTS = 1500;
const POOLED_REQUESTS = 300;
const ANSWER_WITHIN_MS = 5000;
/** Bytes of an answer read (and checked); a longer one is cancelled there. */
const BODY_LIMIT = 1 << 20;
/** Routes that upgrade to a WebSocket: a plain GET only gets their refusal (api-edge-requests covers them). */
const SOCKET_ROUTES = /\/(replay|foxglove)$/;
const HOSTILE = [
  '',
  '-1',
  '0',
  '1',
  '2',
  '10',
  '1e308',
  '-1e308',
  'NaN',
  'Infinity',
  '-0',
  '9007199254740993',
  '99999999999999999999',
  '0x10',
  '1.5',
  ' 1',
  'abc',
  '\u0000',
  '\ud800',
  '../../etc/passwd',
  '/',
  ',,,',
  'a'.repeat(5000),
  'us',
  'ms',
  'relative',
  'absolute',
  'json',
  'ndjson',
  'csv',
  'binary',
  'true',
  'false',
  'nearest',
  'previous',
  'drop',
  'null',
  '{}',
  '2026-01-01T00:00:00Z',
  '-5000',
];

/** A lone surrogate cannot be percent-encoded as UTF-8: sent as the bytes a careless client would send. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

interface Parameter {
  name: string;
  description?: string;
  schema: { enum?: string[]; pattern?: string };
}

interface Route {
  path: string;
  query: Parameter[];
}

/**
 * A value the parameter's own schema allows, mostly: its enum, a number where its pattern asks for digits (small,
 * fractional, zero, or far too large), the bag's urls where it names urls, and the `next` tokens earlier answers
 * gave. Mostly valid values, so that a request gets past its first parameter's check to the code behind it.
 */
function validValue(parameter: Parameter, urls: string[], cursors: string[], rand: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const { name, schema } = parameter;
  const url = () => (urls.length > 0 ? pick(urls) : '/none');
  if (schema.enum) return pick(schema.enum);
  if (schema.pattern?.includes('\\d'))
    return pick([
      String(Math.floor(rand() * 10)),
      String(Math.floor(rand() * 5000)),
      (rand() * 100).toFixed(3),
      '0',
      '1',
      '100000000000',
      '9'.repeat(30),
    ]);
  if (name === 'cursor') return cursors.length > 0 ? pick(cursors) : 'x';
  if (name === 'base') return rand() < 0.5 ? url() : `${pick(['30', '0.5', '1000000', '0'])}hz`;
  if (name === 'match') return `${url()}=${pick(['nearest', 'previous', 'linear', 'x'])}`;
  if (name === 'urls' || name === 'group') return urls.slice(0, 1 + Math.floor(rand() * urls.length)).join(',');
  return url();
}

let fx: FixtureRoot;
/** On the server's own thread: the routes and decoders, without the workers' start-up per runtime. */
let app: BagApp;
/** With a worker doing the bag work: the same requests through the pool's messages and its error mapping. */
let pooled: BagApp;
let routes: Route[];
const urlsOf = new Map<string, string[]>();

before(async () => {
  fx = await buildFixtureRoot();
  for (const folder of ['mcap', 'ros1', 'ros2', 'apollo', 'ulog', 'flatbuffers'])
    cpSync(fixturePath('foreign', folder), join(fx.root, 'foreign', folder), { recursive: true });
  app = createApp({ root: fx.root, workers: 0 });
  pooled = createApp({ root: fx.root, workers: 1 });
  const spec = (await (await app.request('/v1/openapi.json')).json()) as {
    paths: Record<string, { get?: { parameters?: (Parameter & { in: string })[] } }>;
  };
  routes = Object.entries(spec.paths)
    .filter(([path, ops]) => ops.get && !SOCKET_ROUTES.test(path))
    .map(([path, ops]) => ({
      path,
      query: (ops.get!.parameters ?? []).filter((p) => p.in === 'query'),
    }));
  const listed = (await (await app.request('/v1/bags?limit=1000')).json()) as { bags: { id: string }[] };
  for (const { id } of listed.bags) {
    const info = await app.request(`/v1/bags/${encode(id)}/info`);
    const urls = info.ok ? ((await info.json()) as { urls?: { url: string }[] }).urls : undefined;
    urlsOf.set(id, urls?.map((u) => u.url) ?? []);
  }
});
after(async () => {
  await app?.close();
  await pooled?.close();
  fx?.cleanup();
});

/**
 * The answer's first `BODY_LIMIT` bytes as text; the rest is cancelled (a streamed answer may be long: an alignment
 * at 1 MHz is a row per µs of the bag). A stream that fails midway throws here.
 */
async function bodyStart(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const pieces: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < BODY_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      pieces.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.length;
  }
  return new TextDecoder().decode(bytes);
}

/** Sends `requests` random requests to `server`; asserts each answer as the header says. */
async function fuzz(server: BagApp, seed: number, requests: number): Promise<void> {
  const rand = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const ids = [...urlsOf.keys()];
  const statuses = new Map<number, number>();
  const cursors: string[] = [];
  for (let n = 0; n < requests; n++) {
    const route = pick(routes);
    const id = rand() < 0.05 ? pick(HOSTILE) : pick(ids);
    const urls = urlsOf.get(id) ?? [];
    let path = route.path
      .replace('{id}', encode(id))
      .replace('{index}', encode(pick(['0', '1', '-1', '99', 'x', '1e9'])));
    const query: string[] = [];
    for (const parameter of route.query) {
      // Absent or once; twice where the parameter may repeat (its description says so), and now and then where it
      // may not. One value in five from the hostile list.
      const repeats = /repeat/i.test(parameter.description ?? '') || rand() < 0.03;
      const times = rand() < 0.35 ? 0 : repeats && rand() < 0.5 ? 2 : 1;
      for (let k = 0; k < times; k++) {
        const value = rand() < 0.2 ? pick(HOSTILE) : validValue(parameter, urls, cursors, rand);
        query.push(`${parameter.name}=${encode(value)}`);
      }
    }
    if (query.length > 0) path += `?${query.join('&')}`;
    const what = `seed ${seed} #${n} GET ${path.slice(0, 200)}`;
    const started = performance.now();
    const response = await server.request(path);
    const body = await bodyStart(response);
    const ms = performance.now() - started;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const json = /^application\/json/.test(response.headers.get('content-type') ?? '');
    if (response.ok && json) {
      // a JSON page is small: whole within BODY_LIMIT
      const next = (JSON.parse(body) as { next?: unknown }).next;
      if (typeof next === 'string') cursors.push(next);
    }
    assert.ok(ms < ANSWER_WITHIN_MS, `${what}: ${Math.round(ms)} ms`);
    // 501 (a payload that cannot be aligned), 503 and 504 (busy, too slow) are typed answers too; 500 is a bug.
    assert.ok(response.status !== 500 && response.status < 505, `${what}: ${response.status} ${body.slice(0, 300)}`);
    assert.ok(!body.includes(fx.root), `${what}: the answer names the server's path`);
    if (response.status >= 400) {
      assert.ok(json, `${what}: ${response.status} without a JSON error`);
      const error = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
      assert.ok(typeof error?.code === 'string' && typeof error.message === 'string', `${what}: ${body}`);
    }
  }
  // The values reach past the parameter checks: a fair share of requests succeed, and both kinds of refusal occur.
  const seen = JSON.stringify([...statuses]);
  assert.ok((statuses.get(200) ?? 0) > requests / 10, `successes: ${seen}`);
  assert.ok((statuses.get(400) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0, seen);
}

describe('API fuzz: random requests to every GET route', () => {
  test('the fixture root serves our bags and the foreign formats', () => {
    const ids = [...urlsOf.keys()];
    for (const want of ['drive.vdb', 'runs/drive.vcap', 'foreign/ros1/lz4.bag', 'foreign/ulog/flight.ulg'])
      assert.ok(ids.includes(want), `${want} in ${ids.join(', ')}`);
    assert.ok(routes.some((r) => r.path.endsWith('/messages')) && routes.length >= 8, 'routes from openapi.json');
  });

  test(`${REQUESTS} requests on the server's thread: typed answers, no server path, each at once`, () =>
    fuzz(app, SEED, REQUESTS));

  test(`${POOLED_REQUESTS} requests through a worker: the same`, () => fuzz(pooled, SEED + 1, POOLED_REQUESTS));
});
