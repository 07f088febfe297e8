import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { parseRos2idl } from '@foxglove/ros2idl-parser';
import { parse } from '@foxglove/rosmsg';
import { MessageWriter as Ros1Writer } from '@foxglove/rosmsg-serialization';
import { MessageWriter as CdrWriter } from '@foxglove/rosmsg2-serialization';
import { parseIDL } from '@foxglove/omgidl-parser';
import { MessageWriter as OmgIdlWriter } from '@foxglove/omgidl-serialization';
import { BagError } from '@vlink/bag-core/errors';
import { SchemaType } from '@vlink/bag-core';
import { PayloadDecoder, type DecodableFrame } from './index.js';
import { plainValue, TooDeepError } from './plain-value.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const ROS1_DEF = `time stamp
int64 big
int64 small
uint8[] bytes
float64[3] xyz
Inner inner
================================================================================
MSG: pkg/Inner
string name
`;
const ROS2_DEF = `builtin_interfaces/Time stamp
int64 big
uint8[] bytes
string name
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
`;
const IDL_DEF = `module pkg {
  module msg {
    struct Thing {
      int32 count;
      string label;
    };
  };
};
`;
const message = (time: object) => ({
  stamp: time,
  big: 2n ** 62n,
  small: -5n,
  bytes: new Uint8Array([1, 2, 250]),
  xyz: new Float64Array([0.5, -1, 2]),
  name: 'n',
  inner: { name: 'in' },
});
/** The decoded value as it reaches a client (the library's message classes become plain objects there). */
const asSent = (decoded: unknown) => JSON.parse(JSON.stringify(decoded));
const frame = (url: string, serType: string, data: Uint8Array): DecodableFrame => ({
  url,
  serType,
  schemaType: SchemaType.Unknown,
  actionType: 0,
  data,
});

describe('PayloadDecoder: ROS 1, CDR', () => {
  const decoder = new PayloadDecoder({
    schemas: [
      { name: 'pkg/Thing', encoding: 'ros1msg', schemaType: SchemaType.Unknown, data: utf8(ROS1_DEF) },
      { name: 'pkg/msg/Thing', encoding: 'ros2msg', schemaType: SchemaType.Cdr, data: utf8(ROS2_DEF) },
      { name: 'pkg::msg::Thing', encoding: 'ros2idl', schemaType: SchemaType.Cdr, data: utf8(IDL_DEF) },
      { name: 'bad/Def', encoding: 'ros1msg', schemaType: SchemaType.Unknown, data: utf8('int32[') },
    ],
    urls: [
      { url: '/ros1', encoding: 'ros1' },
      { url: '/cdr', encoding: 'cdr' },
    ],
  });

  test('ROS 1 through its ros1msg schema, as plain JSON (int64 as numbers when safe, else strings; arrays)', () => {
    const bytes = new Ros1Writer(parse(ROS1_DEF)).writeMessage(message({ sec: 3, nsec: 4 }));
    assert.deepEqual(asSent(decoder.decode(frame('/ros1', 'pkg/Thing', bytes))), {
      kind: 'ros1',
      value: {
        stamp: { sec: 3, nsec: 4 },
        big: '4611686018427387904',
        small: -5,
        bytes: [1, 2, 250],
        xyz: [0.5, -1, 2],
        inner: { name: 'in' },
      },
    });
  });

  test('CDR through ros2msg and ros2idl schemas', () => {
    const bytes = new CdrWriter(parse(ROS2_DEF, { ros2: true })).writeMessage(message({ sec: 3, nanosec: 4 }));
    assert.deepEqual(asSent(decoder.decode(frame('/cdr', 'pkg/msg/Thing', bytes))), {
      kind: 'cdr',
      value: { stamp: { sec: 3, nanosec: 4 }, big: '4611686018427387904', bytes: [1, 2, 250], name: 'n' },
    });
    const idl = new CdrWriter(parseRos2idl(IDL_DEF) as never).writeMessage({ count: 9, label: 'l' });
    assert.deepEqual(asSent(decoder.decode(frame('/cdr', 'pkg::msg::Thing', idl))), {
      kind: 'cdr',
      value: { count: 9, label: 'l' },
    });
  });

  test('ros2idl: the struct named by the type is the root, although the IDL defines the one it uses first', () => {
    // rosbag2 stores a type's .idl as is; an IDL may declare its nested struct before the type itself.
    const idl = `module pkg { module msg {
      struct Sub { int32 x; int32 y; };
      struct Pair { pkg::msg::Sub sub; string label; };
    }; };`;
    const definitions = parseRos2idl(idl);
    const root = definitions.find((d) => d.name === 'pkg/msg/Pair')!;
    const bytes = new CdrWriter([root, ...definitions.filter((d) => d !== root)] as never).writeMessage({
      sub: { x: 1, y: 2 },
      label: 'pair',
    });
    for (const name of ['pkg/msg/Pair', 'pkg::msg::Pair']) {
      const own = new PayloadDecoder({
        schemas: [{ name, encoding: 'ros2idl', schemaType: SchemaType.Cdr, data: utf8(idl) }],
        urls: [{ url: '/idl', encoding: 'cdr' }],
      });
      assert.deepEqual(asSent(own.decodeOrThrow(frame('/idl', name, bytes))), { sub: { x: 1, y: 2 }, label: 'pair' });
    }
  });

  test('truncated payloads, missing and broken schemas: typed errors naming url and type', () => {
    const bytes = new Ros1Writer(parse(ROS1_DEF)).writeMessage(message({ sec: 3, nsec: 4 }));
    const cut = decoder.decode(frame('/ros1', 'pkg/Thing', bytes.subarray(0, 10)));
    assert.equal(cut.kind, 'hex');
    assert.match((cut as { reason: string }).reason, /^ros1 decode of pkg\/Thing failed: /);
    assert.throws(
      () => decoder.decodeOrThrow(frame('/ros1', 'pkg/Absent', bytes)),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'NOT_FOUND' && e.url === '/ros1' && /pkg\/Absent/.test(e.message),
    );
    assert.throws(
      () => decoder.decodeOrThrow(frame('/ros1', 'bad/Def', bytes)),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'CORRUPT_DATA' && /ros1msg schema of bad\/Def/.test(e.message),
    );
    // A ros1msg schema is not taken for a cdr payload of the same name.
    assert.throws(
      () => decoder.decodeOrThrow(frame('/cdr', 'pkg/Thing', bytes)),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'NOT_FOUND' && /no cdr schema embedded for pkg\/Thing/.test(e.message),
    );
  });

  test('a payload longer than its definition is refused, not decoded in part (CDR: up to 3 bytes of padding kept)', () => {
    const ros1 = new Ros1Writer(parse(ROS1_DEF)).writeMessage(message({ sec: 3, nsec: 4 }));
    const longer = new Uint8Array([...ros1, 0]);
    const refused = decoder.decode(frame('/ros1', 'pkg/Thing', longer));
    assert.equal(refused.kind, 'hex');
    assert.equal(
      (refused as { reason: string }).reason,
      `ros1 decode of pkg/Thing failed: the definition of pkg/Thing describes ${ros1.length} of its ${longer.length} bytes`,
    );
    assert.equal((refused as { error: BagError }).error.code, 'CORRUPT_DATA');
    const cdr = new CdrWriter(parse(ROS2_DEF, { ros2: true })).writeMessage(message({ sec: 3, nanosec: 4 }));
    // DDS pads a serialized payload to a multiple of 4 bytes.
    const padded = new Uint8Array([...cdr, 0, 0, 0]);
    assert.equal(decoder.decode(frame('/cdr', 'pkg/msg/Thing', padded)).kind, 'cdr');
    const other = new Uint8Array([...cdr, 0, 0, 0, 0]);
    assert.match(
      (decoder.decode(frame('/cdr', 'pkg/msg/Thing', other)) as { reason: string }).reason,
      new RegExp(`describes ${cdr.length} of its ${other.length} bytes$`),
    );
  });

  test('CDR through an omgidl schema (MCAP: the schema name is the root type), as Foxglove writes it', () => {
    const idl = `module fleet {
  enum Mode { IDLE, DRIVING };
  struct Wheel { float speed; };
  struct State {
    uint32 id;
    Mode mode;
    string label;
    sequence<Wheel> wheels;
    @optional double battery;
  };
};`;
    const omg = new PayloadDecoder({
      schemas: [{ name: 'fleet::State', encoding: 'omgidl', schemaType: SchemaType.Cdr, data: utf8(idl) }],
      urls: [{ url: '/state', encoding: 'cdr' }],
    });
    const state = { id: 7, mode: 1, label: 'car-7', wheels: [{ speed: 1.5 }, { speed: -2 }], battery: 0.25 };
    for (const cdrOptions of [{}, { kind: 0x07 }]) {
      // Plain CDR, and XCDR2 (kind 7: delimited, as DDS writes appendable types).
      const bytes = new OmgIdlWriter('fleet::State', parseIDL(idl), cdrOptions).writeMessage(state);
      assert.deepEqual(asSent(omg.decode(frame('/state', 'fleet::State', bytes))), { kind: 'cdr', value: state });
    }
    const cut = omg.decode(frame('/state', 'fleet::State', new Uint8Array([0, 1, 0, 0, 7])));
    assert.equal(cut.kind === 'hex' && cut.error?.code, 'CORRUPT_DATA');
  });

  test('omgidl: a payload longer than its definition is refused (up to 3 bytes of padding kept), XCDR2 and unions too', () => {
    const idl = `module fleet {
  struct Pose { double x; double y; };
  @appendable struct Cell { uint8 kind; };
  union Reading switch (uint8) { case 0: float temperature; case 1: string error; };
  struct Sample { uint8 flag; };
};`;
    const omg = new PayloadDecoder({
      schemas: ['fleet::Pose', 'fleet::Cell', 'fleet::Reading', 'fleet::Sample'].map((name) => ({
        name,
        encoding: 'omgidl',
        schemaType: SchemaType.Cdr,
        data: utf8(idl),
      })),
      urls: [{ url: '/x', encoding: 'cdr' }],
    });
    const decode = (type: string, bytes: Uint8Array) => omg.decode(frame('/x', type, bytes));
    const longer = (bytes: Uint8Array, n: number) => new Uint8Array([...bytes, ...new Array<number>(n).fill(0)]);
    // Plain CDR little-endian: header 00 01 00 00, two doubles (8-aligned after the header) = 20 bytes.
    const pose = new OmgIdlWriter('fleet::Pose', parseIDL(idl)).writeMessage({ x: 1.5, y: -2 });
    assert.equal(pose.length, 20);
    assert.deepEqual(asSent(decode('fleet::Pose', longer(pose, 3))), { kind: 'cdr', value: { x: 1.5, y: -2 } });
    const refused = decode('fleet::Pose', longer(pose, 4));
    assert.equal(refused.kind === 'hex' && refused.error?.code, 'CORRUPT_DATA');
    assert.match((refused as { reason: string }).reason, /the definition of fleet::Pose describes 20 of its 24 bytes$/);
    // A struct of one byte, as DDS pads it to 8 bytes: kept; one more word of bytes is not.
    const sample = Uint8Array.of(0, 1, 0, 0, 1, 0, 0, 0);
    assert.deepEqual(asSent(decode('fleet::Sample', sample)), { kind: 'cdr', value: { flag: 1 } });
    assert.equal(decode('fleet::Sample', longer(sample, 4)).kind, 'hex');
    // XCDR2, little-endian: a delimited (appendable) struct, DHEADER = 1, then its byte (kind 0x09: D_CDR2 LE).
    const cell = Uint8Array.of(0, 0x09, 0, 0, 1, 0, 0, 0, 7);
    assert.deepEqual(asSent(decode('fleet::Cell', cell)), { kind: 'cdr', value: { kind: 7 } });
    assert.deepEqual(asSent(decode('fleet::Cell', longer(cell, 3))), { kind: 'cdr', value: { kind: 7 } });
    assert.equal(decode('fleet::Cell', longer(cell, 4)).kind, 'hex');
    // A union: the discriminator, then the case.
    const reading = Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f);
    assert.deepEqual(asSent(decode('fleet::Reading', reading)), { kind: 'cdr', value: { temperature: 1 } });
    assert.equal(decode('fleet::Reading', longer(reading, 4)).kind, 'hex');
  });

  test('plainValue: bigints, typed arrays, nesting limit', () => {
    assert.deepEqual(plainValue({ a: [1n, new BigInt64Array([2n ** 63n - 1n])] }, 10), {
      a: [1, ['9223372036854775807']],
    });
    assert.throws(() => plainValue({ a: { b: { c: {} } } }, 2), TooDeepError);
    assert.deepEqual(plainValue({ a: { b: 1 } }, 2), { a: { b: 1 } });
  });
});
