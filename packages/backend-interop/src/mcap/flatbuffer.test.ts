import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { PayloadDecoder } from '@vlink/bag-decode';
import { checkFixture } from '../testing/check-fixture.js';
import { registerAll } from '../testing/register.js';

registerAll();

// Flatbuffer channels of a plain MCAP (payloads compiled by flatc from JSON, bfbs schemas by flatc, written by the
// mcap Python writer): read as mcap's reader reads them, and every payload decodes to exactly what `flatc --json`
// decodes it to — enums by name, absent fields absent, 64-bit integers past 2^53 as decimal strings.
describe('flatbuffer payloads decode as flatc decodes them', () => {
  test('flatbuffers/flatbuffer.mcap', async () => {
    const { reader, info, frames, schemas, expected } = await checkFixture('flatbuffers/flatbuffer.mcap');
    try {
      const decoder = new PayloadDecoder({ schemas, urls: info.urls });
      assert.equal(expected.decoded.length, frames.length, 'flatc decoded every message');
      for (const sample of expected.decoded) {
        const frame = frames[sample.index]!;
        assert.deepEqual(
          decoder.decode(frame),
          { kind: 'flatbuffer', value: sample.fields },
          `message ${sample.index}`,
        );
      }
    } finally {
      reader.close();
    }
  });

  test('a damaged payload is an error of its frame, never a read outside it', async () => {
    const { reader, info, frames, schemas } = await checkFixture('flatbuffers/flatbuffer.mcap');
    try {
      const decoder = new PayloadDecoder({ schemas, urls: info.urls });
      const frame = frames.find((f) => f.url === '/fb/pose')!;
      for (const data of [
        frame.data.subarray(0, 3),
        frame.data.subarray(0, frame.data.length >> 1),
        Uint8Array.from(frame.data, (b, i) => (i < 4 ? 0xff : b)),
      ]) {
        const got = decoder.decode({ ...frame, data });
        assert.equal(got.kind, 'hex');
        assert.ok(got.kind === 'hex' && got.error?.code === 'CORRUPT_DATA', JSON.stringify(got));
      }
      // The bfbs stored under another name: a type it has is found by name, else its root table is the type.
      const bfbs = schemas.find((s) => s.name === 'vlink.test.Pose')!;
      const renamed = (name: string) =>
        new PayloadDecoder({ schemas: [{ ...bfbs, name }], urls: info.urls }).decode({ ...frame, serType: name });
      assert.deepEqual(renamed('Pose'), decoder.decode(frame), 'the root table under a VLink ser without namespace');
      const struct = renamed('vlink.test.Vec3');
      assert.equal(struct.kind, 'hex');
      assert.match(struct.kind === 'hex' ? (struct.reason ?? '') : '', /vlink\.test\.Vec3 is a struct/);
      const wrong = decoder.decode({ ...frame, serType: 'vlink.test.Nope' });
      assert.equal(wrong.kind, 'hex');
      assert.match(
        wrong.kind === 'hex' ? (wrong.reason ?? '') : '',
        /no flatbuffer schema embedded for vlink\.test\.Nope/,
      );
    } finally {
      reader.close();
    }
  });

  test('a length anywhere in a payload set to 169 million: an error of the frame, never a process abort', async () => {
    // Found by fuzzing: one flipped length byte of a vector of strings made the reflection library push 169 million
    // elements, and V8 aborted the process ("invalid size error"), which no try/catch stops.
    const { reader, info, frames, schemas } = await checkFixture('flatbuffers/flatbuffer.mcap');
    try {
      const decoder = new PayloadDecoder({ schemas, urls: info.urls });
      let refused = 0;
      for (const frame of frames.filter((f, i) => frames.findIndex((g) => g.url === f.url) === i)) {
        for (let at = 0; at + 4 <= frame.data.length; at++) {
          const data = frame.data.slice();
          new DataView(data.buffer).setUint32(at, 169_220_804, true);
          const got = decoder.decode({ ...frame, data });
          if (got.kind === 'hex') {
            assert.equal(got.error?.code, 'CORRUPT_DATA', JSON.stringify(got));
            refused++;
          }
        }
      }
      assert.ok(refused > 0);
    } finally {
      reader.close();
    }
  });
});
