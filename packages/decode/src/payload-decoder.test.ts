import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { create, createFileRegistry, toBinary } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { BagError } from '@vlink/bag-core/errors';
import { ActionType, SchemaType } from '@vlink/bag-core';
import { PayloadDecoder, type DecodableFrame, type Decoded, type DecoderSchema } from './index.js';

const { DOUBLE, STRING, INT32, INT64, MESSAGE } = FieldDescriptorProto_Type;

/** A field as protoc writes it (with `json_name`), or as many other tools do (`jsonName: false`: without it). */
const field = (name: string, number: number, type: FieldDescriptorProto_Type, typeName?: string, jsonName = true) => ({
  name,
  number,
  type,
  label: FieldDescriptorProto_Label.OPTIONAL,
  ...(jsonName ? { jsonName: name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()) } : {}),
  ...(typeName ? { typeName } : {}),
});
const file = (
  name: string,
  pkg: string,
  messages: { name: string; fields: ReturnType<typeof field>[] }[],
  dependency: string[] = [],
) =>
  create(FileDescriptorProtoSchema, {
    name,
    package: pkg,
    syntax: 'proto3',
    dependency,
    messageType: messages.map((m) => ({ name: m.name, field: m.fields })),
  });
const fds = (...files: FileDescriptorProto[]) =>
  toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: files }));
const schema = (
  name: string,
  data: Uint8Array,
  schemaType = SchemaType.Protobuf,
  encoding = 'protobuf',
): DecoderSchema => ({
  name,
  encoding,
  schemaType,
  data,
});

/** `test.Point`, an RPC pair `test.Req` / `test.Resp`, and `test.Pose` (snake_case fields) in one embedded set. */
const TEST_FILE = file('test/test.proto', 'test', [
  { name: 'Point', fields: [field('x', 1, DOUBLE), field('y', 2, DOUBLE), field('label', 3, STRING)] },
  { name: 'Req', fields: [field('id', 1, INT32)] },
  { name: 'Resp', fields: [field('answer', 1, STRING)] },
  { name: 'Pose', fields: [field('frame_id', 1, STRING), field('the_point', 2, MESSAGE, '.test.Point')] },
]);
/** The same messages without `json_name` anywhere. */
const BARE_FILE = file('bare/bare.proto', 'bare', [
  { name: 'Point', fields: [field('x_pos', 1, DOUBLE, undefined, false), field('big', 2, INT64, undefined, false)] },
  { name: 'Pose', fields: [field('the_point', 1, MESSAGE, '.bare.Point', false)] },
]);
const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: [TEST_FILE, BARE_FILE] }));
const encode = (type: string, init: object) => {
  const desc = registry.getMessage(type)!;
  return toBinary(desc, create(desc, init as never));
};
const utf8 = (text: string) => new TextEncoder().encode(text);
const frame = (
  serType: string,
  schemaType: number,
  data: Uint8Array,
  actionType: number = ActionType.Publish,
  url = '/t',
): DecodableFrame => ({ url, serType, schemaType, actionType, data });
const NOT_UTF8 = new Uint8Array([0xff, 0xfe, 0x80]);

describe('PayloadDecoder: protobuf', () => {
  const decoder = new PayloadDecoder({
    schemas: [schema('test.Point', fds(TEST_FILE)), schema('bare.Pose', fds(BARE_FILE))],
  });

  test('through the embedded FileDescriptorSet; RPC urls pick the request or response half', () => {
    assert.deepEqual(
      decoder.decode(frame('test.Point', SchemaType.Protobuf, encode('test.Point', { x: 0.5, y: -1, label: 'p0' }))),
      { kind: 'protobuf', value: { x: 0.5, y: -1, label: 'p0' } },
    );
    const rpc = 'test.Req|test.Resp';
    assert.deepEqual(
      decoder.decode(frame(rpc, SchemaType.Protobuf, encode('test.Req', { id: 7 }), ActionType.ClientRequest)),
      { kind: 'protobuf', value: { id: 7 } },
    );
    assert.deepEqual(
      decoder.decode(
        frame(rpc, SchemaType.Protobuf, encode('test.Resp', { answer: 'yes' }), ActionType.ServerResponse),
      ),
      { kind: 'protobuf', value: { answer: 'yes' } },
    );
  });

  test('field names are the descriptor names; camelCase (json_name) only with jsonNames', () => {
    const pose = encode('test.Pose', { frameId: 'map', thePoint: { x: 1 } });
    assert.deepEqual(decoder.decode(frame('test.Pose', SchemaType.Protobuf, pose)), {
      kind: 'protobuf',
      value: { frame_id: 'map', the_point: { x: 1 } },
    });
    const camel = new PayloadDecoder({ schemas: [schema('s', fds(TEST_FILE))], jsonNames: true });
    assert.deepEqual(camel.decode(frame('test.Pose', SchemaType.Protobuf, pose)), {
      kind: 'protobuf',
      value: { frameId: 'map', thePoint: { x: 1 } },
    });
  });

  test('a descriptor without json_name decodes to its field names (and to protoc camelCase with jsonNames)', () => {
    const bytes = encode('bare.Pose', { thePoint: { xPos: 1.5, big: 2n ** 60n } });
    assert.deepEqual(decoder.decode(frame('bare.Pose', SchemaType.Protobuf, bytes)), {
      kind: 'protobuf',
      value: { the_point: { x_pos: 1.5, big: '1152921504606846976' } },
    });
    const camel = new PayloadDecoder({ schemas: [schema('bare.Pose', fds(BARE_FILE))], jsonNames: true });
    assert.deepEqual(camel.decode(frame('bare.Pose', SchemaType.Protobuf, bytes)), {
      kind: 'protobuf',
      value: { thePoint: { xPos: 1.5, big: '1152921504606846976' } },
    });
  });

  test('default-valued fields: omitted by default, written with alwaysEmitImplicit (the player)', () => {
    const zero = frame('test.Point', SchemaType.Protobuf, encode('test.Point', { x: 1 }));
    assert.deepEqual(decoder.decode(zero), { kind: 'protobuf', value: { x: 1 } });
    const player = new PayloadDecoder({ schemas: [schema('s', fds(TEST_FILE))], alwaysEmitImplicit: true });
    assert.deepEqual(player.decode(zero), { kind: 'protobuf', value: { x: 1, y: 0, label: '' } });
  });

  test('payloads that do not decode stay hex with a typed BagError naming the url and the type', () => {
    const garbled = decoder.decode(
      frame('test.Point', SchemaType.Protobuf, new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), 0, '/pb'),
    );
    assertHex(garbled, /^protobuf decode of test\.Point failed: /, 'CORRUPT_DATA', '/pb');
    assertHex(
      decoder.decode(frame('test.Missing', SchemaType.Protobuf, new Uint8Array(), 0, '/m')),
      /^no protobuf descriptor embedded for test\.Missing$/,
      'NOT_FOUND',
      '/m',
    );
    assertHex(
      new PayloadDecoder().decode(frame('test.Point', SchemaType.Protobuf, new Uint8Array())),
      /^no protobuf descriptor embedded for test\.Point$/,
      'NOT_FOUND',
    );
    assert.throws(
      () => decoder.decodeOrThrow(frame('test.Missing', SchemaType.Protobuf, new Uint8Array(), 0, '/m')),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'NOT_FOUND' && e.url === '/m' && /test\.Missing/.test(e.message),
    );
  });

  test('bad schemas never throw: they are named with the payloads that needed them, and good sets still decode', () => {
    const notASet = schema('broken', new Uint8Array([0x0a, 0x05, 0xff]));
    const orphan = fds(
      file(
        'other/uses.proto',
        'other',
        [{ name: 'Uses', fields: [field('p', 1, MESSAGE, '.absent.Thing')] }],
        ['absent/thing.proto'],
      ),
    );
    const clash = fds(file('clash/point.proto', 'test', [{ name: 'Point', fields: [field('z', 1, DOUBLE)] }]));
    const tolerant = new PayloadDecoder({
      schemas: [
        notASet,
        schema('test.Point', fds(TEST_FILE)),
        schema('other.Uses', orphan),
        schema('clash', clash),
        schema('raw', NOT_UTF8, SchemaType.Raw, ''),
      ],
    });
    // Two files defining test.Point make one registry impossible; each set then gets its own, the first one found wins.
    assert.deepEqual(tolerant.decode(frame('test.Point', SchemaType.Protobuf, encode('test.Point', { x: 2 }))), {
      kind: 'protobuf',
      value: { x: 2 },
    });
    assertHex(
      tolerant.decode(frame('other.Uses', SchemaType.Protobuf, new Uint8Array())),
      /^no protobuf descriptor embedded for other\.Uses \(schema broken is not a FileDescriptorSet: /,
      'NOT_FOUND',
    );
  });

  test('each (type, encoding) decoder is built once and cached', () => {
    const cached = new PayloadDecoder({ schemas: [schema('s', fds(TEST_FILE))] });
    assert.equal(cached.builtDecoders, 0);
    for (let i = 0; i < 5; i++) cached.decode(frame('test.Point', SchemaType.Protobuf, encode('test.Point', { x: i })));
    assert.equal(cached.builtDecoders, 1);
    cached.decode(frame('test.Missing', SchemaType.Protobuf, new Uint8Array()));
    cached.decode(frame('test.Missing', SchemaType.Protobuf, new Uint8Array()));
    cached.decode(frame('{}', SchemaType.Raw, utf8('{}')));
    assert.equal(cached.builtDecoders, 2, 'a missing type is looked up once too; JSON needs no decoder');
  });
});

describe('PayloadDecoder: JSON, text, bytes', () => {
  const decoder = new PayloadDecoder({
    urls: [
      { url: '/mcap/json', encoding: 'json' },
      { url: '/old/fb', encoding: 'flatbuffers' },
      { url: '/new/fb', encoding: 'flatbuffer' },
      { url: '/rpc', encoding: '' },
    ],
  });

  test('by ser name (VLink) or by the channel encoding (MCAP json channels name their schema): parsed everywhere', () => {
    for (const ser of ['json', 'application/json', 'text/json']) {
      assert.deepEqual(decoder.decode(frame(ser, SchemaType.Raw, utf8('{"i":1,"ok":true}'))), {
        kind: 'json',
        value: { i: 1, ok: true },
      });
    }
    const mcap = frame('vlink.test.RobotStatus', SchemaType.Raw, utf8('{"battery":0.5}'), 0, '/mcap/json');
    assert.deepEqual(decoder.decode(mcap), { kind: 'json', value: { battery: 0.5 } });
    assert.deepEqual(
      new PayloadDecoder({ rawAsText: true, urls: [{ url: '/mcap/json', encoding: 'JSON' }] }).decode(mcap),
      {
        kind: 'json',
        value: { battery: 0.5 },
      },
    );
    assert.deepEqual(decoder.decode(frame('json', SchemaType.Raw, new Uint8Array())), { kind: 'json', value: null });
    assert.deepEqual(decoder.decode(frame('json', SchemaType.Raw, utf8('{"cut'))), { kind: 'text', value: '{"cut' });
    assertHex(decoder.decode(frame('json', SchemaType.Raw, NOT_UTF8)), /^payload is not UTF-8$/, 'CORRUPT_DATA');
    // The RPC rule applies to JSON too: a response of `json|text` is text.
    assert.deepEqual(decoder.decode(frame('json|text', SchemaType.Raw, utf8('42'), ActionType.ClientResponse)), {
      kind: 'text',
      value: '42',
    });
  });

  test('text by ser name; not UTF-8 stays hex', () => {
    for (const ser of ['text', 'string', 'std::string']) {
      assert.deepEqual(decoder.decode(frame(ser, SchemaType.Raw, utf8('line 2, "quoted" ✓'))), {
        kind: 'text',
        value: 'line 2, "quoted" ✓',
      });
    }
    assertHex(decoder.decode(frame('text', SchemaType.Raw, NOT_UTF8)), /^payload is not UTF-8$/, 'CORRUPT_DATA');
  });

  test('old and well-known encoding names alike: flatbuffers/flatbuffer need a bfbs, an empty RPC encoding uses the family', () => {
    assert.equal(
      decoder.encodingOf(frame('fb.T', SchemaType.Flatbuffers, new Uint8Array(), 0, '/old/fb')),
      'flatbuffer',
    );
    assert.equal(decoder.encodingOf(frame('fb.T', SchemaType.Unknown, new Uint8Array(), 0, '/new/fb')), 'flatbuffer');
    assertHex(
      decoder.decode(frame('fb.T', SchemaType.Flatbuffers, utf8('x'), 0, '/old/fb')),
      /^no flatbuffer schema embedded for fb\.T$/,
      'NOT_FOUND',
    );
    assert.equal(
      decoder.encodingOf(frame('a.Req|a.Resp', SchemaType.Protobuf, new Uint8Array(), 1, '/rpc')),
      'protobuf',
    );
    assert.equal(decoder.encodingOf(frame('json|text', SchemaType.Raw, new Uint8Array(), 2, '/rpc')), 'text');
  });

  test('hex fallback: other families stay bytes without a reason; rawAsText (the CLI) shows UTF-8 Raw payloads as text', () => {
    assert.deepEqual(decoder.decode(frame('raw', SchemaType.Raw, utf8('hello'))), { kind: 'hex' });
    assert.deepEqual(decoder.decode(frame('', SchemaType.Unknown, new Uint8Array([1, 2]))), { kind: 'hex' });
    const cli = new PayloadDecoder({ rawAsText: true });
    assert.deepEqual(cli.decode(frame('raw', SchemaType.Raw, utf8('hello'))), { kind: 'text', value: 'hello' });
    assertHex(cli.decode(frame('raw', SchemaType.Raw, NOT_UTF8)), /^payload is not UTF-8$/, 'CORRUPT_DATA');
    assert.deepEqual(cli.decode(frame('zc.Table', SchemaType.ZeroCopy, utf8('hello'))), { kind: 'hex' }, 'only Raw');
    assert.deepEqual(cli.decode(frame('json', SchemaType.Raw, utf8('[1]'))), { kind: 'json', value: [1] });
    assert.throws(
      () => decoder.decodeOrThrow(frame('raw', SchemaType.Raw, utf8('hello'), 0, '/r')),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED' && e.url === '/r',
    );
  });

  test('maxBytes keeps large payloads hex before parsing them; maxDepth keeps deep JSON hex', () => {
    const capped = new PayloadDecoder({ maxBytes: 8, maxDepth: 3 });
    assert.deepEqual(capped.decode(frame('text', SchemaType.Raw, utf8('four'))), { kind: 'text', value: 'four' });
    assertHex(
      capped.decode(frame('text', SchemaType.Raw, utf8('nine!!!!!'))),
      /^too large to decode$/,
      'LIMIT_REACHED',
    );
    assertHex(
      capped.decode(frame('test.Point', SchemaType.Protobuf, new Uint8Array(9))),
      /^too large/,
      'LIMIT_REACHED',
    );
    assert.deepEqual(capped.decode(frame('json', SchemaType.Raw, utf8('[[1]]'))), { kind: 'json', value: [[1]] });
    assertHex(
      capped.decode(frame('json', SchemaType.Raw, utf8('[[[[]]]]'))),
      /^nested deeper than 3 levels$/,
      'LIMIT_REACHED',
    );
  });
});

describe('PayloadDecoder: a url’s own schema (UrlMeta.schemaIndex)', () => {
  // Two ROS 1 definitions of one type name with the same byte layout: only the schema says which fields they are.
  const schemas = [
    schema('pkg/Reading', utf8('int32 a'), SchemaType.Unknown, 'ros1msg'),
    schema('pkg/Reading', utf8('float32 z'), SchemaType.Unknown, 'ros1msg'),
  ];
  const bytes = new Uint8Array(new Float32Array([1.5]).buffer);
  const reading = (url: string) => frame('pkg/Reading', SchemaType.Unknown, bytes, ActionType.Publish, url);
  /** The decoded value as plain JSON data (the ROS decoders return objects of their own classes). */
  const decoded = (decoder: PayloadDecoder, f: DecodableFrame) => JSON.parse(JSON.stringify(decoder.decodeOrThrow(f)));

  test('each url decodes with its own schema, not with the first of its type name', () => {
    const decoder = new PayloadDecoder({
      schemas,
      urls: [
        { url: '/v1', encoding: 'ros1', schemaIndex: 0 },
        { url: '/v2', encoding: 'ros1', schemaIndex: 1 },
      ],
    });
    assert.deepEqual(decoded(decoder, reading('/v2')), { z: 1.5 });
    assert.deepEqual(decoded(decoder, reading('/v1')), { a: 1069547520 });
    assert.equal(decoder.builtDecoders, 2);
  });

  test('without an index, with one that disagrees between the url’s channels, or one of another name: by name', () => {
    const decoder = new PayloadDecoder({
      schemas: [...schemas, schema('other/Type', utf8('float32 z'), SchemaType.Unknown, 'ros1msg')],
      urls: [
        { url: '/plain', encoding: 'ros1' },
        { url: '/two', encoding: 'ros1', schemaIndex: 1 },
        { url: '/two', encoding: 'ros1', schemaIndex: 0 },
        { url: '/other', encoding: 'ros1', schemaIndex: 2 },
      ],
    });
    for (const url of ['/plain', '/two', '/other'])
      assert.deepEqual(decoded(decoder, reading(url)), { a: 1069547520 }, url);
  });

  test('protobuf: the url’s own descriptor set, although another set defines the same full name', () => {
    const v2 = file('test/v2.proto', 'test', [{ name: 'Point', fields: [field('label', 1, STRING)] }]);
    const sets = [schema('test.Point', fds(TEST_FILE)), schema('test.Point', fds(v2))];
    const decoder = new PayloadDecoder({
      schemas: sets,
      urls: [
        { url: '/p1', encoding: 'protobuf', schemaIndex: 0 },
        { url: '/p2', encoding: 'protobuf', schemaIndex: 1 },
      ],
    });
    const payload = encode('test.Point', { x: 2, label: 'p' });
    assert.deepEqual(
      decoder.decodeOrThrow(frame('test.Point', SchemaType.Protobuf, payload, ActionType.Publish, '/p1')),
      {
        x: 2,
        label: 'p',
      },
    );
    const text = new Uint8Array([0x0a, 0x02, 0x68, 0x69]); // field 1, length 2: "hi"
    assert.deepEqual(decoder.decodeOrThrow(frame('test.Point', SchemaType.Protobuf, text, ActionType.Publish, '/p2')), {
      label: 'hi',
    });
  });
});

describe('PayloadDecoder: garbage', () => {
  test('garbage of every encoding and option never throws', () => {
    const schemas = [
      schema('test.Point', fds(TEST_FILE)),
      schema('std_msgs/String', utf8('string data'), SchemaType.Unknown, 'ros1msg'),
      schema('std_msgs/msg/String', utf8('string data'), SchemaType.Cdr, 'ros2msg'),
      schema('esc', utf8('esc:uint64_t timestamp;uint8_t[4] x;'), SchemaType.Unknown, 'ulog'),
      // not a bfbs at all: building its decoder must fail as a typed error of the frames that need it
      schema(
        'fb.Garbage',
        Uint8Array.from({ length: 64 }, (_, i) => (i * 97 + 13) & 0xff),
        SchemaType.Flatbuffers,
        'flatbuffer',
      ),
    ];
    const urls = [
      { url: '/ros1', encoding: 'ros1' },
      { url: '/cdr', encoding: 'cdr' },
      { url: '/ulog', encoding: 'ulog' },
      { url: '/json', encoding: 'json' },
      { url: '/fb', encoding: 'flatbuffer' },
    ];
    const decoders = [
      new PayloadDecoder({ schemas, urls }),
      new PayloadDecoder({ schemas, urls, rawAsText: true, maxBytes: 64, jsonNames: true }),
      new PayloadDecoder(),
    ];
    const sers = [
      'test.Point',
      'test.Req|test.Resp',
      'std_msgs/String',
      'std_msgs/msg/String',
      'esc',
      'fb.Garbage',
      'json',
      'text',
      '',
      '|',
      '__proto__',
    ];
    const urlNames = ['/ros1', '/cdr', '/ulog', '/json', '/fb', '/other'];
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let i = 0; i < 3000; i++) {
      const data = Uint8Array.from({ length: Math.floor(random() * 96) }, () => Math.floor(random() * 256));
      const f = frame(sers[i % sers.length]!, i % 6, data, i % 9, urlNames[i % urlNames.length]);
      for (const d of decoders) {
        const got = d.decode(f);
        assert.ok(['protobuf', 'json', 'text', 'ros1', 'cdr', 'ulog', 'flatbuffer', 'hex'].includes(got.kind));
        assert.doesNotThrow(() => JSON.stringify(got.kind === 'hex' ? null : got.value), 'plain JSON values');
      }
    }
  });
});

function assertHex(decoded: Decoded, reason: RegExp, code?: string, url?: string): void {
  assert.equal(decoded.kind, 'hex', JSON.stringify(decoded));
  if (decoded.kind !== 'hex') return;
  assert.match(decoded.reason ?? '', reason);
  if (code !== undefined) {
    assert.ok(decoded.error && BagError.isInstance(decoded.error), 'a BagError');
    assert.equal(decoded.error.code, code);
    assert.equal(decoded.error.reason, decoded.reason);
    if (url !== undefined) assert.equal(decoded.error.url, url);
  }
}
