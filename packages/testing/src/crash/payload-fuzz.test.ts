import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagReader, type Frame } from '@vlink/bag';
import { PayloadDecoder } from '@vlink/bag-decode';
import { fixturePath } from '@vlink/fixtures';
import { prng } from './fuzz.js';
import { currentRuntime } from './runtime.js';

// Damaged payloads through every decoder (protobuf, JSON, ROS 1, CDR, flatbuffer, ULog, Apollo's protobuf): each
// frame of the foreign fixtures mutated many ways (bit flips, cuts, a huge length written anywhere, bytes appended,
// a tail of 0xff) must decode or be an error of its frame, at once. A decoder that trusts a length can do worse than
// throw: a flatbuffer vector claiming 169 million strings made V8 abort the process (fixed in decode/flatbuffer.ts),
// which a try/catch cannot stop, so this runs in the test's own process, where an abort fails the suite.

const FILES = [
  'mcap/json.mcap',
  'mcap/protobuf.mcap',
  'mcap/ros1.mcap',
  'mcap/ros2.mcap',
  'flatbuffers/flatbuffer.mcap',
  'ros1/plain.bag',
  'ros2/sqlite3',
  'apollo/sensors.record',
  'ulog/flight.ulg',
  'ulog/edge.ulg',
];
const FRAMES_PER_FILE = 40;
const MUTATIONS_PER_FRAME = 12;
const HUGE = [0xffffffff, 0x7fffffff, 0x10000000, 169_220_804, 65_536];

function mutate(data: Uint8Array, rand: () => number): [string, Uint8Array] {
  const int = (n: number) => Math.floor(rand() * n);
  const out = data.slice();
  switch (int(5)) {
    case 0: {
      for (let i = 0; i < 1 + int(4); i++) out[int(out.length)]! ^= 1 << int(8);
      return ['flip bits', out];
    }
    case 1:
      return ['cut', out.subarray(0, int(out.length))];
    case 2: {
      const at = int(Math.max(1, out.length - 3));
      if (at + 4 <= out.length) new DataView(out.buffer).setUint32(at, HUGE[int(HUGE.length)]!, true);
      return [`huge u32 at ${at}`, out];
    }
    case 3: {
      const longer = new Uint8Array(out.length + 1 + int(64));
      longer.set(out);
      for (let i = out.length; i < longer.length; i++) longer[i] = int(256);
      return ['bytes appended', longer];
    }
    default:
      out.fill(0xff, int(out.length));
      return ['0xff tail', out];
  }
}

describe(`damaged payloads through every decoder (${currentRuntime()})`, () => {
  for (const file of FILES) {
    test(file, async () => {
      const reader = await BagReader.create(fixturePath('foreign', file));
      const frames: Frame[] = [];
      let decoder: PayloadDecoder;
      try {
        decoder = new PayloadDecoder({ schemas: reader.getSchemas(), urls: reader.getInfo().urls });
        for await (const frame of reader.frames()) if (frames.length < FRAMES_PER_FILE) frames.push(frame);
      } finally {
        reader.close();
      }
      const rand = prng(20261203);
      for (const frame of frames) {
        if (frame.data.length === 0) continue;
        for (let k = 0; k < MUTATIONS_PER_FRAME; k++) {
          const [mutation, data] = mutate(frame.data, rand);
          const started = performance.now();
          const got = decoder.decode({ ...frame, data });
          const ms = performance.now() - started;
          assert.ok(ms < 2000, `${frame.url} (${mutation}): ${Math.round(ms)} ms`);
          if (got.kind === 'hex' && got.error)
            assert.ok(got.error.code, `${frame.url} (${mutation}): an untyped error`);
        }
      }
      assert.ok(frames.length > 0, 'the fixture has frames to damage');
    });
  }
});

// Damaged schemas: a flatbuffers schema (bfbs) is itself a flatbuffer, and the reflection library trusted its vector
// counts too: one count overwritten made it loop over billions of zeros read past the schema, and the decoder hung
// (found by a fuzz of the schemas of flatbuffer.mcap). Every 4-byte position of each schema gets a huge count here:
// each decoder must be built or refused, and each frame decoded or an error of its frame, at once.
describe(`damaged flatbuffers schemas through the decoder (${currentRuntime()})`, () => {
  test('flatbuffers/flatbuffer.mcap: a huge count at every position of each schema', async () => {
    const reader = await BagReader.create(fixturePath('foreign', 'flatbuffers/flatbuffer.mcap'));
    const schemas = reader.getSchemas();
    const urls = reader.getInfo().urls;
    const frames: Frame[] = [];
    try {
      for await (const frame of reader.frames())
        if (frames.length < 4) frames.push({ ...frame, data: frame.data.slice() });
    } finally {
      reader.close();
    }
    let refused = 0;
    for (const [index, schema] of schemas.entries()) {
      for (let at = 0; at + 4 <= schema.data.length; at++) {
        const data = schema.data.slice();
        new DataView(data.buffer).setUint32(at, 0x7fffffff, true);
        const damaged = schemas.map((s, i) => (i === index ? { ...s, data } : s));
        const started = performance.now();
        for (const frame of frames) {
          const got = new PayloadDecoder({ schemas: damaged, urls }).decode(frame);
          if (got.kind === 'hex' && got.error) {
            refused++;
            assert.ok(got.error.code, `${schema.name} @${at}: an untyped error`);
          }
        }
        const ms = performance.now() - started;
        assert.ok(ms < 2000, `${schema.name} with a huge count at ${at}: ${Math.round(ms)} ms`);
      }
    }
    assert.ok(refused > 0, 'some damage is refused');
  });
});
