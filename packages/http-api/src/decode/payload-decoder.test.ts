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
import { ActionType, SchemaType, serForAction as coreSerForAction, type SchemaData } from '@vlink/bag';
import { SCHEMA_PROTOBUF, SCHEMA_RAW, serForAction } from './frame-fields.js';
import { PayloadDecoder, type DecodableFrame, type Decoded } from './payload-decoder.js';
import { ProtobufDecoder } from './protobuf-decoder.js';

const { DOUBLE, STRING, INT32, MESSAGE } = FieldDescriptorProto_Type;
const field = (name: string, number: number, type: FieldDescriptorProto_Type, typeName?: string) => ({
  name,
  number,
  type,
  label: FieldDescriptorProto_Label.OPTIONAL,
  jsonName: name,
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
const schema = (name: string, data: Uint8Array, schemaType = SchemaType.Protobuf): SchemaData => ({
  name,
  encoding: 'protobuf',
  schemaType,
  data,
});

/** `test.Point`, and an RPC pair `test.Req` / `test.Resp`, in one embedded set. */
const TEST_FILE = file('test/test.proto', 'test', [
  { name: 'Point', fields: [field('x', 1, DOUBLE), field('y', 2, DOUBLE), field('label', 3, STRING)] },
  { name: 'Req', fields: [field('id', 1, INT32)] },
  { name: 'Resp', fields: [field('answer', 1, STRING)] },
]);
const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: [TEST_FILE] }));
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
): DecodableFrame => ({ serType, schemaType, actionType, data });
const NOT_UTF8 = new Uint8Array([0xff, 0xfe, 0x80]);

describe('PayloadDecoder', () => {
  const protobuf = new ProtobufDecoder([schema('test.Point', fds(TEST_FILE))]);
  const decoder = new PayloadDecoder({ protobuf });

  test('protobuf through the embedded FileDescriptorSet; RPC urls pick the request or response half', () => {
    assert.deepEqual(
      decoder.decode(frame('test.Point', SCHEMA_PROTOBUF, encode('test.Point', { x: 0.5, y: -1, label: 'p0' }))),
      {
        kind: 'protobuf',
        value: { x: 0.5, y: -1, label: 'p0' },
      },
    );
    const rpc = 'test.Req|test.Resp';
    assert.deepEqual(
      decoder.decode(frame(rpc, SCHEMA_PROTOBUF, encode('test.Req', { id: 7 }), ActionType.ClientRequest)),
      { kind: 'protobuf', value: { id: 7 } },
    );
    assert.deepEqual(
      decoder.decode(frame(rpc, SCHEMA_PROTOBUF, encode('test.Resp', { answer: 'yes' }), ActionType.ServerResponse)),
      { kind: 'protobuf', value: { answer: 'yes' } },
    );
  });

  test('default-valued protobuf fields: omitted by default, written with alwaysEmitImplicit (the player)', () => {
    const zero = frame('test.Point', SCHEMA_PROTOBUF, encode('test.Point', { x: 1 }));
    assert.deepEqual(decoder.decode(zero), { kind: 'protobuf', value: { x: 1 } });
    const player = new PayloadDecoder({
      protobuf: new ProtobufDecoder([schema('s', fds(TEST_FILE))], { alwaysEmitImplicit: true }),
    });
    assert.deepEqual(player.decode(zero), { kind: 'protobuf', value: { x: 1, y: 0, label: '' } });
  });

  test('protobuf that cannot be decoded stays hex and says why', () => {
    const garbled = frame('test.Point', SCHEMA_PROTOBUF, new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    assertHex(decoder.decode(garbled), /^protobuf decode failed: /);
    assertHex(
      decoder.decode(frame('test.Missing', SCHEMA_PROTOBUF, new Uint8Array())),
      /^no descriptor embedded for test\.Missing$/,
    );
    assertHex(
      new PayloadDecoder().decode(frame('test.Point', SCHEMA_PROTOBUF, new Uint8Array())),
      /^no descriptor embedded for test\.Point$/,
    );
    assertHex(
      new PayloadDecoder({ protobuf: new ProtobufDecoder([]) }).decode(
        frame('test.Point', SCHEMA_PROTOBUF, new Uint8Array()),
      ),
      /^no descriptor embedded/,
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
      protobuf: new ProtobufDecoder([
        notASet,
        schema('test.Point', fds(TEST_FILE)),
        schema('other.Uses', orphan),
        schema('clash', clash),
        schema('raw', NOT_UTF8, SchemaType.Raw),
      ]),
    });
    // Two files defining test.Point make one registry impossible; each set then gets its own, the first one found wins.
    assert.deepEqual(tolerant.decode(frame('test.Point', SCHEMA_PROTOBUF, encode('test.Point', { x: 2 }))), {
      kind: 'protobuf',
      value: { x: 2 },
    });
    assertHex(
      tolerant.decode(frame('other.Uses', SCHEMA_PROTOBUF, new Uint8Array())),
      /^no descriptor embedded for other\.Uses \(schema broken is not a FileDescriptorSet: /,
    );
  });

  test('JSON by ser name: parsed, empty is null, not JSON reads as text, not UTF-8 stays hex', () => {
    for (const ser of ['json', 'application/json', 'text/json']) {
      assert.deepEqual(
        decoder.decode(frame(ser, SCHEMA_RAW, utf8('{"i":1,"ok":true}'))),
        { kind: 'json', value: { i: 1, ok: true } },
        ser,
      );
    }
    assert.deepEqual(decoder.decode(frame('json', SCHEMA_RAW, new Uint8Array())), { kind: 'json', value: null });
    assert.deepEqual(decoder.decode(frame('json', SCHEMA_RAW, utf8('{"cut'))), { kind: 'text', value: '{"cut' });
    assertHex(decoder.decode(frame('json', SCHEMA_RAW, NOT_UTF8)), /^payload is not UTF-8$/);
    // The RPC rule applies to JSON too: a response of `json|text` is text.
    assert.deepEqual(decoder.decode(frame('json|text', SCHEMA_RAW, utf8('42'), ActionType.ClientResponse)), {
      kind: 'text',
      value: '42',
    });
  });

  test('text by ser name; not UTF-8 stays hex', () => {
    for (const ser of ['text', 'string', 'std::string']) {
      assert.deepEqual(
        decoder.decode(frame(ser, SCHEMA_RAW, utf8('line 2, "quoted" ✓'))),
        { kind: 'text', value: 'line 2, "quoted" ✓' },
        ser,
      );
    }
    assertHex(decoder.decode(frame('text', SCHEMA_RAW, NOT_UTF8)), /^payload is not UTF-8$/);
  });

  test('hex fallback: other families stay bytes without a reason; rawAsText (the CLI) shows UTF-8 Raw payloads as text', () => {
    assert.deepEqual(decoder.decode(frame('raw', SCHEMA_RAW, utf8('hello'))), { kind: 'hex' });
    assert.deepEqual(decoder.decode(frame('fb.Table', SchemaType.Flatbuffers, utf8('hello'))), { kind: 'hex' });
    assert.deepEqual(decoder.decode(frame('', SchemaType.Unknown, new Uint8Array([1, 2]))), { kind: 'hex' });
    const cli = new PayloadDecoder({ protobuf, rawAsText: true });
    assert.deepEqual(cli.decode(frame('raw', SCHEMA_RAW, utf8('hello'))), { kind: 'text', value: 'hello' });
    assertHex(cli.decode(frame('raw', SCHEMA_RAW, NOT_UTF8)), /^payload is not UTF-8$/);
    assert.deepEqual(cli.decode(frame('fb.Table', SchemaType.Flatbuffers, utf8('hello'))), { kind: 'hex' }, 'only Raw');
    assert.deepEqual(
      cli.decode(frame('json', SCHEMA_RAW, utf8('[1]'))),
      { kind: 'json', value: [1] },
      'JSON still wins',
    );
  });

  test('maxBytes (the player) keeps large payloads hex before parsing them', () => {
    const capped = new PayloadDecoder({ protobuf, maxBytes: 4 });
    assert.deepEqual(capped.decode(frame('text', SCHEMA_RAW, utf8('four'))), { kind: 'text', value: 'four' });
    assert.deepEqual(capped.decode(frame('text', SCHEMA_RAW, utf8('five!'))), {
      kind: 'hex',
      reason: 'too large to decode',
    });
    assert.deepEqual(capped.decode(frame('test.Point', SCHEMA_PROTOBUF, new Uint8Array(5))), {
      kind: 'hex',
      reason: 'too large to decode',
    });
  });

  test('garbage of every family and option never throws', () => {
    const decoders = [decoder, new PayloadDecoder({ protobuf, rawAsText: true, maxBytes: 64 }), new PayloadDecoder()];
    const sers = ['test.Point', 'test.Req|test.Resp', 'json', 'text', 'raw', '', '|', 'a|b|c', '__proto__', 'toString'];
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let i = 0; i < 2000; i++) {
      const data = Uint8Array.from({ length: Math.floor(random() * 96) }, () => Math.floor(random() * 256));
      const f = frame(sers[i % sers.length]!, i % 6, data, i % 9);
      for (const d of decoders) {
        const got = d.decode(f);
        assert.ok(['protobuf', 'json', 'text', 'hex'].includes(got.kind));
      }
    }
    assert.doesNotThrow(
      () => new ProtobufDecoder([schema('x', NOT_UTF8), schema('y', new Uint8Array(300).fill(0x0a))]),
    );
  });

  test("the local enum values and serForAction match core's", () => {
    assert.equal(SCHEMA_RAW, SchemaType.Raw);
    assert.equal(SCHEMA_PROTOBUF, SchemaType.Protobuf);
    for (let action = -1; action <= 9; action++) {
      for (const ser of ['', 'a', 'Req|Resp', '|Resp', 'Req|', 'a|b|c']) {
        assert.equal(serForAction(ser, action), coreSerForAction(ser, action as ActionType), `${ser} / ${action}`);
      }
    }
  });
});

function assertHex(decoded: Decoded, reason: RegExp): void {
  assert.equal(decoded.kind, 'hex', JSON.stringify(decoded));
  assert.match((decoded as { reason?: string }).reason ?? '', reason);
}
