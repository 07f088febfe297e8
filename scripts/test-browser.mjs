#!/usr/bin/env node
// Browser test of the web player (packages/http-api/player): a real Chromium (Debian's, driven by playwright-core)
// against a real server on 127.0.0.1:0 serving a bag written here with a known 2 s gap.
// Needs the built packages (`npm run build`); installs Chromium with apt-get when it is missing (as root), and skips
// with the reason where it cannot (fails instead when CI is set).
// Prints `ok`/`not ok` per check and a final `N passed, N failed`; exits non-zero on any failure.
// Leaves a screenshot in test-artifacts/player.png.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(root, 'test-artifacts');
const START_MS = Date.UTC(2026, 2, 17, 1, 2, 3, 456);
/** The imu url runs at 100 Hz from 100 ms to 9.99 s, with nothing between 4 s and 6 s: one gap, 4.000 s + 2.000 s. */
const GAP = { url: 'dds://imu', startMs: 4000, lengthMs: 2000 };
const HARD_TIMEOUT_MS = 240_000;

let passed = 0;
let failed = 0;
const fail = (why) => {
  console.error(`not ok - ${why}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
};

/**
 * Makes sure Debian's Chromium is there, installing it with apt-get when it is missing and we are root. Where it can't
 * be had, the browser tests are skipped with the reason (exit 0) on a developer's machine, and fail under CI (`CI`
 * set), which must run them.
 */
function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  const unavailable = (why) => {
    if (process.env.CI) fail(`${why} (CI is set, so the browser tests must run)`);
    console.log(`# SKIP browser tests: ${why}`);
    process.exit(0);
  };
  if (process.env.CHROMIUM_PATH) unavailable(`CHROMIUM_PATH=${CHROMIUM} does not exist`);
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    unavailable(
      `${CHROMIUM} is missing and this is not root to install it: run \`sudo apt-get install -y chromium\` (or set CHROMIUM_PATH)`,
    );
  }
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    unavailable(`${CHROMIUM} is missing and there is no apt-get to install it (set CHROMIUM_PATH to a Chromium)`);
  }
  console.log(
    "# installing Debian's chromium package with apt-get: the web player is tested in a real browser, taken from" +
      " the distribution's packages rather than a browser download",
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'chromium'],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0) unavailable(`apt-get ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
  }
  if (!existsSync(CHROMIUM)) unavailable(`apt-get installed chromium but ${CHROMIUM} is still missing`);
}

async function writeBags(dir) {
  const { ActionType, BagWriter, SchemaType } = await import(join(root, 'packages/bag/dist/index.js'));
  const { pointDescriptor, pointBytes } = await import('@vlink/fixtures/protobuf');
  const { fds, Point } = pointDescriptor();
  const frames = [];
  const json = (o) => new TextEncoder().encode(JSON.stringify(o));
  for (let t = 100; t < 10_000; t += 10) {
    if (t > GAP.startMs && t < GAP.startMs + GAP.lengthMs) continue;
    frames.push({
      timestamp: t * 1000,
      url: GAP.url,
      data: json({ t, ax: Math.sin(t / 500), ay: 0.1 }),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  for (let i = 0, t = 100; t < 10_000; i++, t += 50) {
    frames.push({
      timestamp: t * 1000 + 5,
      url: 'dds://pose',
      data: pointBytes(Point, i),
      serType: 'test.Point',
      schemaType: SchemaType.Protobuf,
      actionType: ActionType.Publish,
    });
  }
  for (let t = 250; t < 10_000; t += 500) {
    frames.push({
      timestamp: t * 1000 + 7,
      url: 'log/text',
      data: new TextEncoder().encode(`tick at ${t} ms`),
      serType: 'text',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  frames.sort((a, b) => a.timestamp - b.timestamp);
  const writer = await BagWriter.create(join(dir, 'gap.vdb'), { syncMode: true, startTimestamp: START_MS });
  writer.pushSchema({ name: 'test.Point', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: fds });
  for (const f of frames) writer.push(f);
  // Counters by cause, for the report panel's bars.
  writer.count(GAP.url, 'readTimeout', 3);
  writer.count('dds://pose', 'missedSlot', 1);
  await writer.close();
  const other = await BagWriter.create(join(dir, 'other.vcap'), { syncMode: true, startTimestamp: START_MS });
  for (let t = 0; t < 2000; t += 100)
    other.push({
      timestamp: t * 1000,
      url: 'a',
      data: new Uint8Array([t & 255]),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await other.close();
  return frames.length;
}

async function main() {
  for (const built of [
    'packages/bag/dist/index.js',
    'packages/http-api/dist/index.js',
    'packages/http-api/dist/player/web/index.html',
  ]) {
    if (!existsSync(join(root, built))) fail(`${built} is missing: run \`npm run build\` first`);
  }
  ensureChromium();
  const { chromium } = await import('playwright-core');
  const { serve } = await import(join(root, 'packages/http-api/dist/index.js'));

  const work = mkdtempSync(join(tmpdir(), 'vlink-browser-'));
  const bags = join(work, 'bags');
  mkdirSync(bags);
  mkdirSync(ARTIFACTS, { recursive: true });
  const total = await writeBags(bags);
  const server = await serve({ root: bags, port: 0 });
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1440, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  const problems = [];
  const requests = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('request', (r) => requests.push(new URL(r.url()).pathname + new URL(r.url()).search));

  const check = async (name, run) => {
    try {
      await run();
      passed++;
      console.log(`ok - ${name}`);
    } catch (error) {
      failed++;
      console.log(
        `not ok - ${name}\n  ${String(error?.message ?? error)
          .split('\n')
          .join('\n  ')}`,
      );
    }
  };
  const assert = (cond, message) => {
    if (!cond) throw new Error(message);
  };
  const text = (testId) => page.getByTestId(testId).innerText();
  const waitFor = async (what, fn, timeout = 10_000) => {
    const until = Date.now() + timeout;
    let last;
    while (Date.now() < until) {
      last = await fn();
      if (last) return last;
      await page.waitForTimeout(50);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const timeValue = () => page.getByTestId('time').inputValue();
  /** "m:ss.mmm" → ms */
  const relMs = (v) => {
    const m = /^(\d+):(\d{2})\.(\d{3})$/.exec(v);
    if (!m) throw new Error(`not a relative time: ${v}`);
    return (Number(m[1]) * 60 + Number(m[2])) * 1000 + Number(m[3]);
  };
  /** Waits until the inspector shows a frame whose time is within [fromMs, toMs]. */
  const waitForFrameBetween = (what, fromMs, toMs) =>
    waitFor(what, async () => {
      if ((await page.getByTestId('frame-time').count()) === 0) return false;
      const t = relMs(await text('frame-time'));
      return t >= fromMs && t <= toMs;
    });

  try {
    await check('the page loads at / and lists the bags', async () => {
      await page.goto(`${server.url}/`);
      assert((await page.title()) === 'vlink-bag player', `title is ${await page.title()}`);
      await page.getByTestId('bag-list').getByText('gap.vdb').waitFor();
      await page.getByTestId('bag-list').getByText('other.vcap').waitFor();
    });

    await check('/player serves the same page', async () => {
      const res = await page.request.get(`${server.url}/player`);
      assert(res.status() === 200 && (await res.text()).includes('<div id="app">'), `status ${res.status()}`);
    });

    await check('opening a bag shows its info', async () => {
      await page.getByTestId('bag-list').getByText('gap.vdb').click();
      const info = await page.getByTestId('bag-info').innerText();
      assert(info.includes(total.toLocaleString('en-US')), `message count ${total} not in: ${info}`);
      assert(/urls\s*3/i.test(info), `3 urls not in: ${info}`);
      assert(info.includes('9.'), `duration not in: ${info}`);
      await page.getByTestId('state').filter({ hasText: 'stopped' }).waitFor();
    });

    await check('the gap is listed (and only it)', async () => {
      await waitFor('the gap count', async () => (await text('gap-count')) === '1');
      const gap = await page.getByTestId('gap-list').innerText();
      assert(gap.includes(GAP.url) && gap.includes('0:04.000') && gap.includes('2.00 s'), `gap list: ${gap}`);
    });

    await check('the report panel plots interval histograms and counters by cause as bars', async () => {
      const imu = page.getByTestId('report-streams').locator(`li[data-url="${GAP.url}"]`);
      await imu.getByTestId('histogram').waitFor();
      // 100 Hz with one 2 s hole: 789 intervals of 10 ms in the 10…11 ms bin (30 bins over 0 … 30 ms), 1 beyond.
      const counts = await imu.locator('rect').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-count'))));
      const want = Array.from({ length: 31 }, (_, i) => (i === 10 ? 789 : i === 30 ? 1 : 0));
      assert(JSON.stringify(counts) === JSON.stringify(want), `imu histogram ${JSON.stringify(counts)}`);
      const tallest = await imu.locator('rect').nth(10).boundingBox();
      assert(tallest && tallest.height > 30, `the 10 ms bar is ${JSON.stringify(tallest)}`);
      const bars = page.getByTestId('counter-bars').locator('li');
      await waitFor('two counter bars', async () => (await bars.count()) === 2);
      const rows = await bars.evaluateAll((lis) =>
        lis.map((li) => [li.textContent, li.querySelector('.counter-bar').getBoundingClientRect().width]),
      );
      assert(rows[0][0].includes('readTimeout') && rows[0][0].endsWith('3'), `first counter row ${rows[0][0]}`);
      assert(rows[1][0].includes('missedSlot') && rows[1][0].endsWith('1'), `second counter row ${rows[1][0]}`);
      const ratio = rows[1][1] / rows[0][1];
      assert(Math.abs(ratio - 1 / 3) < 0.05, `bar widths ${rows[0][1]} and ${rows[1][1]}`);
    });

    await check('densities come from /density; messages are never fetched', async () => {
      await waitFor('the overview density', async () => requests.some((r) => r.includes('/density?buckets=')));
      assert(!requests.some((r) => r.includes('/messages')), 'the page fetched /messages');
      const box = await page.getByTestId('timeline').boundingBox();
      assert(box && box.height >= 26 + 3 * 22, `timeline box ${JSON.stringify(box)}`);
    });

    await check('play streams frames into the inspector (protobuf decoded)', async () => {
      await page.getByTestId('inspector-url').selectOption('dds://pose');
      await page.getByTestId('play').click();
      await page.getByTestId('state').filter({ hasText: 'playing' }).waitFor();
      await waitFor(
        'a decoded pose',
        async () => (await page.getByTestId('payload').count()) > 0 && (await text('payload')).includes('"label"'),
      );
      assert((await text('decoded-kind')) === 'protobuf', `decoded as ${await text('decoded-kind')}`);
      const received = Number((await text('received')).replace(/\D/g, ''));
      assert(received > 0, 'no frame received');
    });

    let pausedAt = 0;
    await check('pause stops the clock', async () => {
      await page.waitForTimeout(400);
      await page.getByTestId('play').click();
      await page.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
      await page.waitForTimeout(150);
      const a = await timeValue();
      await page.waitForTimeout(400);
      const b = await timeValue();
      assert(a === b, `time moved while paused: ${a} → ${b}`);
      pausedAt = relMs(a);
      assert(pausedAt > 100 && pausedAt < 3000, `paused at ${a}`);
    });

    await check('seek by the time field moves the time display', async () => {
      const field = page.getByTestId('time');
      await field.click();
      await field.fill('0:08.5');
      await field.press('Enter');
      await waitFor('the time to read 0:08.500', async () => (await timeValue()) === '0:08.500');
      await page.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
    });

    await check('step sends the next frame after the seek point', async () => {
      await page.getByTestId('inspector-url').selectOption(GAP.url);
      await page.getByTestId('step').click();
      await waitForFrameBetween('a frame of the imu after 8.5 s', 8500, 8600);
      assert((await text('decoded-kind')) === 'json', `decoded as ${await text('decoded-kind')}`);
    });

    await check('seek by clicking the timeline', async () => {
      const box = await page.getByTestId('timeline').boundingBox();
      // The plot starts after the 210 px label column; the view is the whole recording (0 … duration).
      const info = await page.evaluate(async () => (await fetch('/v1/bags/gap.vdb/info')).json());
      const plotX0 = box.x + 210;
      const targetMs = 2500;
      const x = plotX0 + (targetMs / info.totalDuration) * (box.width - 210);
      await page.mouse.click(x, box.y + 40);
      await waitFor('the time near 0:02.500', async () => Math.abs(relMs(await timeValue()) - targetMs) < 60);
    });

    await check('the gap list seeks to its gap', async () => {
      await page.getByTestId('gap-list').getByRole('button').first().click();
      await waitFor('the time at the gap', async () => (await timeValue()) === '0:04.000');
    });

    await check('UTC and local times follow the recording start', async () => {
      await page.getByTestId('time-mode').selectOption('utc');
      await waitFor('a UTC time', async () => (await timeValue()) === '2026-03-17 01:02:07.456');
      await page.getByTestId('time-mode').selectOption('relative');
    });

    await check(
      'while stopped, a seek opens a paused replay there, and step from stopped sends the frame after it',
      async () => {
        // Both open a new pass first and go on only once the server's answer to it (its command id) came back.
        await page.getByTestId('stop').click();
        await page.getByTestId('state').filter({ hasText: 'stopped' }).waitFor();
        const field = page.getByTestId('time');
        await field.click();
        await field.fill('0:07.25');
        await field.press('Enter');
        await page.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
        await waitFor('the time to read 0:07.250', async () => (await timeValue()) === '0:07.250');
        await page.getByTestId('stop').click();
        await page.getByTestId('state').filter({ hasText: 'stopped' }).waitFor();
        await page.getByTestId('inspector-url').selectOption(GAP.url);
        await page.getByTestId('step').click();
        await waitForFrameBetween('a frame of the imu just after 7.25 s', 7250, 7400);
        await page.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
      },
    );

    await check('whitelist, max rate, then the replay runs to its end', async () => {
      await page.getByTestId('filter-mode').selectOption('whitelist');
      await page.getByRole('checkbox', { name: 'whitelist log/text' }).check();
      await page.getByTestId('rate').selectOption('0');
      await page.getByTestId('inspector-url').selectOption('log/text');
      await page.getByTestId('play').click();
      await waitFor(
        'the last log line',
        async () => (await page.getByTestId('payload').count()) > 0 && (await text('payload')) === 'tick at 9750 ms',
      );
      await page.getByTestId('state').filter({ hasText: 'stopped' }).waitFor();
      await page.getByTestId('filter-mode').selectOption('all');
      await page.getByTestId('rate').selectOption('1');
    });

    await check('keyboard: 0 fits, Space plays and pauses; screenshot', async () => {
      await page.getByTestId('inspector-url').selectOption('dds://pose');
      await page.locator('h1').click();
      await page.keyboard.press('0');
      await page.keyboard.press('Space');
      await page.getByTestId('state').filter({ hasText: 'playing' }).waitFor();
      await waitFor('a pose frame', async () => (await page.getByTestId('frame-time').count()) > 0);
      await page.waitForTimeout(1200);
      await page.keyboard.press('Space');
      await page.getByTestId('state').filter({ hasText: 'paused' }).waitFor();
      const at = relMs(await timeValue());
      assert(at > 500 && at < 3000, `paused at ${at} ms`);
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(ARTIFACTS, 'player.png') });
    });

    await check(
      'a server with a token: the page asks for it; #token= opens the bag and leaves the address bar',
      async () => {
        const guarded = await serve({ root: bags, port: 0, token: 'sesame' });
        const other = await context.newPage();
        try {
          await other.goto(`${guarded.url}/`);
          await other.locator('input[name=token]').waitFor();
          await other.getByText('UNAUTHORIZED').waitFor();
          await other.goto(`${guarded.url}/#token=sesame&bag=gap.vdb`);
          await other.getByTestId('bag-info').waitFor();
          await other.getByTestId('state').filter({ hasText: 'stopped' }).waitFor();
          const hash = await other.evaluate(() => location.hash);
          assert(!hash.includes('sesame') && hash.includes('bag=gap.vdb'), `hash is ${hash}`);
        } finally {
          await other.close();
          await guarded.close();
        }
      },
    );

    await check('no page errors or console errors (CSP included)', async () => {
      assert(problems.length === 0, problems.join('\n'));
    });
  } finally {
    await context.close().catch(() => undefined);
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
}

const guard = setTimeout(() => fail(`the browser test took longer than ${HARD_TIMEOUT_MS / 1000} s`), HARD_TIMEOUT_MS);
guard.unref();
try {
  await main();
} catch (error) {
  failed++;
  console.log(`not ok - setup: ${error?.stack ?? error}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
