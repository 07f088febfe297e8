import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { ActionType } from './action-type.js';
import type { SchemaData } from './frame.js';
import { SchemaType } from './schema-type.js';
import { channelFamily, keptFamily, keptSer, schemaKey, urlFamilyOfSer } from './url-identity.js';

const place = { file: 'a.vcap', url: '/imu' };
const conflict = (message: string) => (error: unknown) =>
  error instanceof BagError &&
  error.code === 'SCHEMA_CONFLICT' &&
  error.url === '/imu' &&
  error.file === 'a.vcap' &&
  error.message.includes(message);

describe('url identity', () => {
  test('a url keeps its first non-empty ser; another one is a conflict naming both', () => {
    assert.equal(keptSer('', 'pb.A', place), 'pb.A');
    assert.equal(keptSer('pb.A', '', place), 'pb.A');
    assert.equal(keptSer('pb.A', 'pb.A', place), 'pb.A');
    assert.equal(keptSer('', '', place), '');
    assert.throws(() => keptSer('pb.A', 'pb.B', place), conflict('ser type "pb.B" conflicts with the recorded "pb.A"'));
  });

  test('Unknown yields to a known family; two known families conflict', () => {
    assert.equal(keptFamily(SchemaType.Unknown, SchemaType.Protobuf, place), SchemaType.Protobuf);
    assert.equal(keptFamily(SchemaType.Cdr, SchemaType.Unknown, place), SchemaType.Cdr);
    assert.equal(keptFamily(SchemaType.Raw, SchemaType.Raw, place), SchemaType.Raw);
    assert.equal(keptFamily(SchemaType.Unknown, SchemaType.Unknown, place), SchemaType.Unknown);
    assert.throws(
      () => keptFamily(SchemaType.Protobuf, SchemaType.Cdr, place),
      conflict('schema type cdr conflicts with the recorded protobuf'),
    );
  });

  test('schema key: name, 0x1F, family label', () => {
    assert.equal(schemaKey('pb.Pose', SchemaType.Protobuf), 'pb.Pose\x1fprotobuf');
    assert.equal(schemaKey('x', SchemaType.Unknown), 'x\x1f');
  });

  test('.vdb: an RPC url resolves both halves of Req|Resp; disagreeing halves make it unknown', () => {
    assert.equal(urlFamilyOfSer('json|json', SchemaType.Unknown, ActionType.ClientRequest), SchemaType.Raw);
    assert.equal(urlFamilyOfSer('json|pb.X', SchemaType.Unknown, ActionType.ClientRequest), SchemaType.Unknown);
    assert.equal(urlFamilyOfSer('json|pb.X', SchemaType.Protobuf, ActionType.ServerResponse), SchemaType.Protobuf);
    // Not an RPC action: the bar is part of the name.
    assert.equal(urlFamilyOfSer('json|json', SchemaType.Unknown, ActionType.Publish), SchemaType.Unknown);
    assert.equal(urlFamilyOfSer('json', SchemaType.Unknown, ActionType.Publish), SchemaType.Raw);
  });

  test("MCAP channels: the action's half of the ser names the schema, whose encoding gives the family", () => {
    const schemas: Record<string, SchemaData> = {
      'pb.Req': { name: 'pb.Req', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: new Uint8Array([1]) },
      'ros.Resp': { name: 'ros.Resp', encoding: 'ros2msg', schemaType: SchemaType.Unknown, data: new Uint8Array([2]) },
    };
    const asked: string[] = [];
    const resolve = (name: string) => {
      asked.push(name);
      return schemas[name];
    };
    const req = channelFamily('pb.Req|ros.Resp', SchemaType.Unknown, ActionType.ClientRequest, resolve);
    assert.deepEqual([req.family, req.schema?.name], [SchemaType.Protobuf, 'pb.Req']);
    const resp = channelFamily('pb.Req|ros.Resp', SchemaType.Unknown, ActionType.ClientResponse, resolve);
    assert.deepEqual([resp.family, resp.schema?.name], [SchemaType.Cdr, 'ros.Resp']);
    assert.deepEqual(asked, ['pb.Req', 'ros.Resp']);
    // An explicit family wins over the schema; no ser asks for no schema.
    assert.equal(channelFamily('pb.Req', SchemaType.Raw, ActionType.Publish, resolve).family, SchemaType.Raw);
    assert.deepEqual(channelFamily('', SchemaType.Unknown, ActionType.Publish, resolve), {
      family: SchemaType.Unknown,
      schema: undefined,
    });
    assert.equal(asked.length, 3);
  });
});
