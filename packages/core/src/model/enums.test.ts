import assert from 'node:assert/strict';
import { test } from '@vlink/fixtures/test';
import { ActionType, actionText, parseAction, serForAction, urlKindOf } from './action-type.js';
import { CompressType, parseCompress, resolveWriterConfig } from './config.js';
import {
  familyMessageEncoding,
  inferSchemaType,
  parseSchemaType,
  resolveSchemaType,
  SchemaType,
  schemaTypeLabel,
} from './schema-type.js';
import { formatFileTime, formatVlinkDate, parseVlinkDate } from './time-format.js';

test('SchemaType keeps VLink integers and labels', () => {
  assert.deepEqual(
    [
      SchemaType.Unknown,
      SchemaType.Raw,
      SchemaType.ZeroCopy,
      SchemaType.Protobuf,
      SchemaType.Flatbuffers,
      SchemaType.Cdr,
    ],
    [0, 1, 2, 3, 4, 5],
  );
  assert.equal(schemaTypeLabel(SchemaType.Unknown), '');
  assert.equal(schemaTypeLabel(SchemaType.Flatbuffers), 'flatbuffers');
  for (const raw of ['raw', ' JSON ', 'text', 'blob', 'string', 'std::string', 'application/json', 'text/json']) {
    assert.equal(parseSchemaType(raw), SchemaType.Raw, raw);
  }
  assert.equal(parseSchemaType('Proto'), SchemaType.Protobuf);
  assert.equal(parseSchemaType('bfbs'), SchemaType.Flatbuffers);
  assert.equal(parseSchemaType('vlink_msg'), SchemaType.ZeroCopy);
  assert.equal(parseSchemaType('yaml'), SchemaType.Unknown);
  assert.equal(inferSchemaType('vlink::zerocopy::Image'), SchemaType.ZeroCopy);
  assert.equal(inferSchemaType('pb.Image'), SchemaType.Unknown, 'protobuf is never guessed from a name');
  assert.equal(resolveSchemaType(SchemaType.Protobuf, 'json', 'raw'), SchemaType.Protobuf);
  assert.equal(resolveSchemaType(SchemaType.Unknown, 'x', 'fbs'), SchemaType.Flatbuffers);
  assert.equal(resolveSchemaType(undefined, 'json'), SchemaType.Raw);
});

test('ActionType keeps VLink integers, texts and url kinds', () => {
  const texts = ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'];
  texts.forEach((text, i) => {
    assert.equal(actionText(i as ActionType), text);
    assert.equal(parseAction(text), i);
  });
  assert.equal(parseAction('pub'), ActionType.Unknown, 'case-sensitive');
  assert.equal(urlKindOf(ActionType.ServerResponse), 'Method');
  assert.equal(urlKindOf(ActionType.Subscribe), 'Event');
  assert.equal(urlKindOf(ActionType.Get), 'Field');
  assert.equal(urlKindOf(ActionType.Unknown), 'Unknown');
  assert.equal(serForAction('A|B', ActionType.ClientRequest), 'A');
  assert.equal(serForAction('A|B', ActionType.ServerResponse), 'B');
  assert.equal(serForAction('A|B', ActionType.Publish), 'A|B');
});

test('writer config defaults are VLink defaults', () => {
  const c = resolveWriterConfig();
  assert.equal(c.cacheSize, 4 * 1024 * 1024);
  assert.equal(c.maxTaskDepth, 20000);
  assert.equal(c.maxMemorySize, 2 * 1024 ** 3);
  assert.equal(c.splitBySize, 1024 ** 3);
  assert.equal(c.maxRowCount, 5_000_000_000);
  assert.equal(c.compressStartSize, 128);
  assert.equal(c.compressLevel, 3);
  assert.equal(c.compress, CompressType.None);
  assert.equal(resolveWriterConfig({ compress: 'zstd', cacheSize: undefined }).compress, CompressType.Zstd);
  assert.equal(resolveWriterConfig({ cacheSize: undefined }).cacheSize, 4 * 1024 * 1024);
  for (const wrong of ['brotli', 7, -1, 1.5, null])
    assert.throws(() => parseCompress(wrong as never), { name: 'BagError', code: 'INVALID_ARGUMENT' }, String(wrong));
  assert.equal(parseCompress(4), CompressType.Lzav);
});

test('dates use VLink formats and parse back', () => {
  const ms = new Date(2026, 2, 17, 10, 0, 0, 123).getTime();
  assert.equal(formatVlinkDate(ms), '2026/03/17 10:00:00:123');
  assert.equal(formatFileTime(ms), '2026-03-17_10-00-00-123');
  assert.equal(parseVlinkDate('2026/03/17 10:00:00:123'), ms);
  assert.equal(parseVlinkDate('2026/03/17 10:00:00'), ms - 123);
  assert.equal(parseVlinkDate('garbage'), undefined);
});

test('the message encoding a family and ser imply: the family first, then JSON and text sers as given', () => {
  const cases: Array<[SchemaType, string, string | undefined]> = [
    [SchemaType.Protobuf, 'json', 'protobuf'],
    [SchemaType.Flatbuffers, '', 'flatbuffer'],
    [SchemaType.Cdr, 'text', 'cdr'],
    [SchemaType.Raw, 'application/json', 'json'],
    [SchemaType.ZeroCopy, 'text/json', 'json'],
    [SchemaType.Unknown, 'std::string', 'text'],
    [SchemaType.Raw, 'JSON', undefined], // compared as given
    [SchemaType.Raw, 'blob', undefined],
    [SchemaType.ZeroCopy, 'vlink::zerocopy::X', undefined],
  ];
  for (const [family, ser, implied] of cases)
    assert.equal(familyMessageEncoding(family, ser), implied, `${family} ${ser}`);
});
