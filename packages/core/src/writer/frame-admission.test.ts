import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { refusalOf, UrlIds } from './frame-admission.js';

describe('UrlIds', () => {
  test('one id per url for good, counted from 0 in order of first use, whatever string object carries it', () => {
    const ids = new UrlIds();
    const built = ['dds://', 'b'].join('');
    assert.deepEqual(
      ['dds://a', 'dds://b', 'dds://a', built, 'dds://c', 'dds://c', 'dds://a'].map((url) => ids.of(url)),
      [0, 1, 0, 1, 2, 2, 0],
    );
  });
});

describe('refusalOf: times', () => {
  const frame = (timestamp: number, publishTime?: number) => ({
    timestamp,
    url: '/a',
    data: new Uint8Array(1),
    serType: 'raw',
    schemaType: 1,
    actionType: 0,
    ...(publishTime === undefined ? {} : { publishTime }),
  });

  test('a time past 2^53 − 1 µs is refused as a limit (LIMIT_REACHED, naming the url); up to it, accepted', () => {
    for (const [timestamp, publishTime] of [
      [2 ** 53, undefined],
      [1e300, undefined],
      [5, 2 ** 53],
      [5, -1e300],
    ] as const) {
      const refusal = refusalOf(frame(timestamp, publishTime), 'f.vcap', false);
      assert.equal(refusal?.reason, 'limit', `${timestamp} ${publishTime}`);
      assert.equal(refusal.error.code, 'LIMIT_REACHED');
      assert.equal(refusal.error.url, '/a');
      assert.match(refusal.error.message, publishTime === undefined ? /^timestamp / : /^publishTime /);
    }
    for (const [timestamp, publishTime] of [
      [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER],
      // Non-finite times keep their meaning: "now" for a timestamp, "none" for a publish time.
      [Number.POSITIVE_INFINITY, Number.NaN],
      [-1, Number.NEGATIVE_INFINITY],
    ])
      assert.equal(
        refusalOf(frame(timestamp!, publishTime), 'f.vcap', false),
        undefined,
        `${timestamp} ${publishTime}`,
      );
  });
});
