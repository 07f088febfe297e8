import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { Frame } from '@vlink/bag-core';
import {
  mcapIndexed,
  mcapStream,
  mixedFrames,
  openBytes,
  readFrames,
  recordToBytes,
  testContext,
} from './vcap.test.helper.js';

// Publish times in .vcap are MCAP's own publish_time (format reference §1.3, §5.2): the official reader
// (@mcap/core) must see them, in chunked and unchunked files, and ours must give them back.

/** Every second frame gets a publish time: 1.25 ms before its log time, the first one before the recording start. */
function framesWithPublish(): Frame[] {
  return mixedFrames(40).map((f, i) => (i % 2 ? f : { ...f, publishTime: i === 0 ? -3_000 : f.timestamp - 1_250 }));
}

describe('.vcap publish_time', () => {
  for (const cacheSize of [64 * 1024, 0]) {
    test(`written as MCAP publish_time and read back (${cacheSize ? 'chunked' : 'unchunked'})`, async () => {
      const context = testContext();
      const startNs = BigInt(context.startTimestamp) * 1_000_000n;
      const input = framesWithPublish();
      const bytes = await recordToBytes(input, { cacheSize }, context);
      const ns = (us: number) => startNs + BigInt(us) * 1000n;
      const want = input.map((f) => [ns(f.timestamp), ns(f.publishTime ?? f.timestamp)]);
      // @mcap/core's stream reader, in file order.
      const streamed = (await mcapStream(bytes)).flatMap((r) =>
        r.type === 'Message' ? [[r.logTime, r.publishTime]] : [],
      );
      assert.deepEqual(streamed, want);
      if (cacheSize) {
        const indexed = await mcapIndexed(bytes);
        const got: bigint[][] = [];
        for await (const m of indexed.readMessages()) got.push([m.logTime, m.publishTime]);
        assert.deepEqual(got, want);
      }
      const reader = await openBytes(bytes);
      try {
        assert.deepEqual(
          readFrames(reader).map((f) => [f.timestamp, f.publishTime]),
          input.map((f) => [f.timestamp, f.publishTime ?? f.timestamp]),
        );
      } finally {
        reader.close();
      }
    });
  }
});
