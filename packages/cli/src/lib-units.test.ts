import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, SchemaType, TriggerRecorder } from '@vlink/bag';
import { Writable } from 'node:stream';
import { decodeFrames } from '@vlink/bag-decode';
import { errorLine } from './lib/errors.js';
import { FrameOutput } from './lib/output.js';
import { paramsOf } from './commands/trigger.js';
import { compatMarkdown, COMPAT_ROWS } from './lib/compat.js';
import { actionPredicate, parseActions, parseTimePoint, windowMs } from './lib/filter-flags.js';
import {
  parseCompressLevel,
  parseInteger,
  parseNonNegative,
  parseNonNegativeInteger,
  parsePositive,
  parseRate,
  parseSeconds,
  parseSourceUrl,
} from './lib/parse.js';
import { listenTriggerHttp } from './lib/trigger-http.js';
import { TriggerSink } from './lib/trigger-sink.js';
import { selectUrls, urlPredicate } from './lib/url-filter.js';
import { formatWallTime, isDatetime, parseDatetimeMs } from './lib/wall-time.js';

/** The small pieces of the dialect layer, in-process: datetimes, windows, actions, filters, trigger plumbing. */
describe('wall-clock datetimes', () => {
  test('UTC, offsets and local time parse to the same instant as Date does', () => {
    assert.equal(parseDatetimeMs('2026-03-17 02:00:00.123Z', false), Date.UTC(2026, 2, 17, 2, 0, 0, 123));
    assert.equal(parseDatetimeMs('2026-03-17-10:00:00+08:00', false), Date.UTC(2026, 2, 17, 2, 0, 0));
    assert.equal(parseDatetimeMs('2026-03-17T02:00:00', true), Date.UTC(2026, 2, 17, 2, 0, 0));
    assert.equal(parseDatetimeMs('2026-03-17 10:00:00', false), new Date(2026, 2, 17, 10, 0, 0).getTime());
    assert.throws(() => parseDatetimeMs('2026-13-17 10:00:00', false), /not a valid date/);
    assert.throws(() => parseDatetimeMs('yesterday', false), /not a datetime/);
    assert.deepEqual([isDatetime('12.5'), isDatetime('2026-03-17 10:00:00')], [false, true]);
  });

  test('formats in UTC and in local time', () => {
    const ms = Date.UTC(2026, 2, 17, 2, 0, 0, 5);
    assert.equal(formatWallTime(ms, true), '2026-03-17 02:00:00.005 UTC');
    const d = new Date(ms);
    const local = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:00.005`;
    assert.equal(formatWallTime(ms, false), local);
  });
});

describe('windows, actions and url filters', () => {
  const timeline = { startTimestamp: Date.UTC(2026, 2, 17), totalDuration: 2000 };
  test('one source per bound; wall-clock bounds are relative to the start; errors say Invalid time', () => {
    assert.deepEqual(windowMs({ begin: parseTimePoint('0.5'), end: parseTimePoint('1.5') }, timeline), {
      beginTime: 500,
      endTime: 1500,
    });
    assert.deepEqual(
      windowMs({ utcBeginTime: { wallMs: timeline.startTimestamp - 5000, text: 'x' }, relEndTime: 1 }, timeline),
      { beginTime: 0, endTime: 1000 },
      'a begin before the start is the start',
    );
    assert.throws(() => windowMs({ begin: { seconds: 1 }, relBeginTime: 1 }, timeline), /given twice/);
    assert.throws(
      () => windowMs({ end: { wallMs: timeline.startTimestamp - 1, text: 'early' } }, timeline),
      /Invalid time: -e\/--end early is before the recording starts/,
    );
    assert.throws(() => windowMs({ begin: { seconds: 3 } }, timeline), /Invalid time: .* past the end/);
  });

  test('actions by text, long name or number; a predicate keeps exactly them', () => {
    assert.deepEqual(parseActions('Pub, sub,7', undefined), [ActionType.Publish, ActionType.Subscribe, ActionType.Set]);
    assert.deepEqual(parseActions('client-request', [ActionType.Get]), [ActionType.Get, ActionType.ClientRequest]);
    assert.throws(() => parseActions('yell', undefined), /actions are/);
    const keep = actionPredicate([ActionType.Get])!;
    assert.deepEqual(
      [ActionType.Get, ActionType.Set].map((a) => keep({ actionType: a } as never)),
      [true, false],
    );
    assert.equal(actionPredicate([]), undefined);
  });

  test('keywords, whitelist and blacklist together, for bags and for live sources', () => {
    const available = ['/camera/front', '/camera/rear', '/imu', '/gps'];
    const selection = selectUrls(available, { filter: ['camera', 'nope'], skipUrls: ['/camera/rear'] });
    assert.deepEqual(selection.filterUrls, ['/camera/front']);
    assert.deepEqual(selection.warnings, ['no url contains "nope" (-i)']);
    const accept = urlPredicate({ urls: ['/imu', '/camera/front'], filter: ['cam'], skipUrls: [] });
    assert.deepEqual(available.map(accept), [true, false, false, false]);
  });

  test('numeric flags: each parser takes its range and names it when refusing', () => {
    const cases: Array<[(value: string) => number, string, number, string, string]> = [
      [parseSeconds, ' 1.5 ', 1.5, '-1', 'must be >= 0 seconds'],
      [parseNonNegative, '0', 0, '-0.1', 'must be >= 0'],
      [parsePositive, '0.5', 0.5, '0', 'must be > 0'],
      [parseInteger, '-3', -3, '1.5', 'must be an integer'],
      [parseNonNegativeInteger, '7', 7, '-1', 'must be an integer >= 0'],
      [parseNonNegativeInteger, '7', 7, '0.5', 'must be an integer'],
      [parseRate, '100', 100, '0.001', 'must be between 0.01 and 100'],
      [parseCompressLevel, '5', 5, '6', 'must be an integer between 0 and 5 (0 = default)'],
    ];
    for (const [parse, good, value, bad, refusal] of cases) {
      assert.equal(parse(good), value);
      assert.throws(() => parse(bad), { message: refusal });
      assert.throws(() => parse(' '), { message: 'not a number' });
      // Decimal only: `Number` would read these as 16, 1, 8 and Infinity.
      for (const other of ['0x10', '0b1', '0o10', 'Infinity'])
        assert.throws(() => parse(other), { message: 'not a number' });
    }
    assert.deepEqual(['.5', '1e3', '+2', '2.'].map(parseSeconds), [0.5, 1000, 2, 2]);
  });

  test('source urls: ws, wss and rosbridge (with a port)', () => {
    assert.equal(parseSourceUrl('rosbridge://robot:9090'), 'rosbridge://robot:9090');
    assert.throws(() => parseSourceUrl('rosbridge://robot'), /needs a port/);
    assert.throws(() => parseSourceUrl('http://robot:1'), /ws:\/\/, wss:\/\/ .* or rosbridge/);
    assert.throws(() => parseSourceUrl('not a url'), /must be a url/);
  });

  test('the compatibility table renders every row', () => {
    const md = compatMarkdown().split('\n');
    assert.equal(md.length, COMPAT_ROWS.length + 2);
    assert.match(md[2]!, /^\| `-u` \| urls to keep \|/);
  });
});

describe('trigger plumbing', () => {
  test('request bodies map onto TriggerParams; bad values are refused', () => {
    assert.deepEqual(paramsOf({ reason: 'r', pre: 1.5, post: 0, out: '/x.vdb', urls: ['/a'], skipUrls: ['/b'] }), {
      reason: 'r',
      outFile: '/x.vdb',
      preMs: 1500,
      postMs: 0,
      whitelist: ['/a'],
      blacklist: ['/b'],
    });
    assert.throws(() => paramsOf({ pre: -1 }), /"pre" must be seconds/);
    assert.throws(() => paramsOf({ urls: '/a' }), /"urls" must be a list/);
  });

  test('the sink feeds the recorder frames and schemas, stops once', async () => {
    const recorder = new TriggerRecorder({ dumpDir: '/nonexistent' });
    recorder.start();
    const logged: string[] = [];
    const triggers: Array<Record<string, unknown>> = [];
    const sink = new TriggerSink(
      recorder,
      (m) => logged.push(m),
      (p) => triggers.push(p),
    );
    await sink.open();
    await sink.ready();
    assert.deepEqual([sink.isOpen, sink.mustWait, sink.isStopping], [true, false, false]);
    const frame = {
      url: '/a',
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
      timestamp: 123,
      data: new Uint8Array([1, 2]),
    };
    await sink.write(frame);
    sink.setUrlLoss('/a', 0.5);
    const schema = { name: 's.A', encoding: 'x', schemaType: SchemaType.Raw, data: new Uint8Array([7]) };
    sink.pushSchema(schema);
    sink.pushSchema(schema);
    sink.log('hello');
    sink.onTriggerLine?.({ reason: 'x' });
    sink.stop('first');
    sink.stop('second');
    assert.equal(await sink.stopped, 'first');
    assert.deepEqual([sink.frames, recorder.stats().frames], [1, 1]);
    assert.deepEqual(logged, ['hello']);
    // The recorder kept the sink's schema: other bytes under its name are a conflict.
    assert.equal(recorder.pushSchema({ ...schema, data: new Uint8Array([8]) }), false);
    assert.equal(recorder.pushSchema(schema), true);
    assert.deepEqual(triggers, [{ reason: 'x' }]);
    await recorder.quit();
    await sink.write(frame);
    assert.equal(sink.refused, 1, 'a stopped recorder refuses, counted');
  });

  test('HTTP: GET /status, 404, a bad body and a refused dump', async () => {
    let fail = false;
    const { url, server } = await listenTriggerHttp(
      { host: '127.0.0.1', port: 0 },
      {
        trigger: async () => {
          if (fail) throw Object.assign(new Error('busy'), { code: 'BUSY' });
          return { ok: true };
        },
        status: () => ({ running: true }),
      },
    );
    try {
      assert.deepEqual(await (await fetch(`${url}/status`)).json(), { running: true });
      assert.equal((await fetch(`${url}/nope`)).status, 404);
      assert.equal((await fetch(`${url}/trigger`, { method: 'POST', body: '{nope' })).status, 400);
      assert.deepEqual(await (await fetch(`${url}/trigger`, { method: 'POST' })).json(), { ok: true });
      fail = true;
      const refused = await fetch(`${url}/trigger`, { method: 'POST', body: '{}' });
      assert.deepEqual([refused.status, await refused.json()], [409, { error: 'busy', code: 'BUSY' }]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('error lines', () => {
  test('a BagError reads `<file>: <detail> (offset, url)`, built from its fields', () => {
    const error = BagError.wrap(new Error('short read'), 'CORRUPT_FILE', 'bad record', {
      file: 'x (file y).vcap',
      offset: 7,
      url: '/a',
    });
    assert.equal(errorLine(error), 'x (file y).vcap: bad record: short read (offset 7, url /a)');
    assert.equal(errorLine(new BagError('NOT_FOUND', 'no such url')), 'no such url');
    assert.equal(errorLine(new BagError('NOT_FOUND', 'no such url'), 'c.vdb'), 'c.vdb: no such url');
  });
});

describe('binary frame output', () => {
  test('frames fill slices, a frame bigger than a slice goes alone, a full stream is waited for', async () => {
    const chunks: Uint8Array[] = [];
    let waits = 0;
    // A stream that takes 100 bytes before it asks to wait, and takes its time: every slice meets a full stream.
    const stream = new Writable({
      highWaterMark: 100,
      write(chunk: Uint8Array, _encoding, done) {
        chunks.push(Uint8Array.from(chunk));
        setTimeout(done, 1);
      },
    });
    const out = new FrameOutput(stream, 256);
    const frames = [10, 200, 30, 1000, 0, 180, 70].map((size, i) => ({
      timestamp: i * 1000,
      publishTime: i % 2 ? i * 1000 - 5 : undefined,
      url: `/u${i % 3}`,
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
      data: Uint8Array.from({ length: size }, (_, k) => (k * 7 + i) & 0xff),
    }));
    for (const frame of frames) {
      const pending = out.write(frame);
      // The frame's bytes are copied at once: the caller may reuse them before waiting.
      frame.data.fill(0xee);
      if (pending) {
        waits++;
        await pending;
      }
    }
    await out.end();
    assert.ok(waits > 0, 'the stream was full at least once');
    // Only the 1000-byte frame (with its header: 8 + 14 + url, ser and a publish time) came in a buffer of its own.
    assert.deepEqual(
      chunks.filter((c) => c.byteLength > 256).map((c) => c.byteLength),
      [8 + 14 + 3 + 3 + 8 + 1000],
    );
    const all = Buffer.concat(chunks);
    const back = decodeFrames(new Uint8Array(all.buffer, all.byteOffset, all.byteLength));
    assert.deepEqual(
      back.map((f) => [f.timestamp, f.publishTime, f.url, f.data.byteLength, f.data[1]]),
      [10, 200, 30, 1000, 0, 180, 70].map((size, i) => [
        i * 1000,
        i % 2 ? i * 1000 - 5 : undefined,
        `/u${i % 3}`,
        size,
        size > 1 ? (7 + i) & 0xff : undefined,
      ]),
    );
  });
});
