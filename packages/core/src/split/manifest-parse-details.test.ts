import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { listedSegments, parseJsonObject, parseManifest } from './manifest-parse.js';

// Every default, type rule and error message of the manifest parser (found unpinned by mutation testing).
const parse = (root: unknown, flavor: 'vdbx' | 'vcapx' = 'vdbx') =>
  parseManifest(JSON.stringify(root), 'drive.vdbx', flavor);

/** The CORRUPT_FILE message of parsing `text`, which must name the file. */
function refusal(text: string): string {
  try {
    parseManifest(text, 'drive.vdbx', 'vdbx');
  } catch (error) {
    assert.ok(BagError.isInstance(error) && error.code === 'CORRUPT_FILE', String(error));
    assert.match(error.message, /\(file drive\.vdbx\)$/);
    return error.message;
  }
  assert.fail(`accepted: ${text}`);
}

describe('manifest parser: defaults and types', () => {
  test('absent and null keys take VLink reader defaults', () => {
    for (const header of [
      {},
      { accuracy: null, compress: null, process: null, tag: null, count: null, complete: null },
    ]) {
      const m = parse({ VLinkHeader: header, VLinkFiles: [] });
      assert.deepEqual(
        [m.version, m.count, m.duration, m.accuracy, m.compress, m.process, m.date, m.tag, m.complete, m.timezone],
        [undefined, 0, 0, '', '', '', '', 'Empty', true, 480],
      );
      assert.deepEqual([m.startTimestamp, m.splitBySize, m.splitByTime, m.urls, m.files], [0, 0, 0, [], []]);
    }
    const given = parse({
      VLinkHeader: { major: 2, accuracy: 'MicroSecond', compress: 'lzav', process: 'app', timezone: 0 },
      VLinkFiles: [],
    });
    assert.deepEqual(given.version, { major: 2, minor: 0, patch: 0 });
    assert.deepEqual(
      [given.accuracy, given.compress, given.process, given.timezone],
      ['MicroSecond', 'lzav', 'app', 0],
    );
    const split = parse({ VLinkHeader: { split_by_size: 1024, split_by_time: 60 }, VLinkFiles: [] });
    assert.deepEqual([split.splitBySize, split.splitByTime], [1024, 60]);
  });

  test('complete may be 0/1, as the SQLite header spells it', () => {
    assert.equal(parse({ VLinkHeader: { complete: 0 }, VLinkFiles: [] }).complete, false);
    assert.equal(parse({ VLinkHeader: { complete: 1 }, VLinkFiles: [] }).complete, true);
  });

  test('url entries: defaults, the four kinds kept, anything else Unknown', () => {
    const m = parse({
      VLinkHeader: {},
      VLinkUrls: [{}, { type: 'Method' }, { type: 'Event' }, { type: 'Field' }, { type: 'Odd' }, { type: null }],
      VLinkFiles: [],
    });
    assert.deepEqual(m.urls[0], {
      index: 0,
      url: '',
      type: 'Unknown',
      ser: '',
      schemaType: m.urls[0]!.schemaType,
      count: 0,
      size: 0,
      loss: 0,
      freq: 0,
    });
    assert.deepEqual(
      m.urls.map((u) => u.type),
      ['Unknown', 'Method', 'Event', 'Field', 'Unknown', 'Unknown'],
    );
  });

  test('a key of the wrong type names the key and the type wanted', () => {
    assert.match(
      refusal(JSON.stringify({ VLinkHeader: { accuracy: 5 }, VLinkFiles: [] })),
      /VLinkHeader\.accuracy is not a string/,
    );
    assert.match(
      refusal(JSON.stringify({ VLinkHeader: { count: 'x' }, VLinkFiles: [] })),
      /VLinkHeader\.count is not a number/,
    );
    assert.match(
      refusal(JSON.stringify({ VLinkHeader: { complete: 'yes' }, VLinkFiles: [] })),
      /VLinkHeader\.complete is not a boolean/,
    );
    assert.match(
      refusal(JSON.stringify({ VLinkHeader: {}, VLinkUrls: [{ url: 3 }], VLinkFiles: [] })),
      /VLinkUrls\[0\]\.url is not a string/,
    );
  });
});

describe('manifest parser: shapes refused, with their messages', () => {
  test('each wrong shape has its own message', () => {
    assert.match(refusal('{"VLinkHeader": '), /^manifest is not valid JSON: /);
    assert.match(refusal('[]'), /^manifest is not a JSON object/);
    assert.match(refusal('{"VLinkFiles": []}'), /^manifest has no VLinkHeader object/);
    assert.match(refusal('{"VLinkHeader": [], "VLinkFiles": []}'), /^manifest has no VLinkHeader object/);
    assert.match(refusal('{"VLinkHeader": {}}'), /^manifest has no VLinkFiles array/);
    assert.match(
      refusal('{"VLinkHeader": {}, "VLinkFiles": [], "VLinkUrls": {}}'),
      /^manifest VLinkUrls is not an array/,
    );
    assert.match(
      refusal('{"VLinkHeader": {}, "VLinkFiles": [], "VLinkUrls": [[]]}'),
      /^manifest VLinkUrls\[0\] is not an object/,
    );
    assert.match(
      refusal('{"VLinkHeader": {}, "VLinkFiles": ["a.vdb", "a.vdb"]}'),
      /VLinkFiles\[1\] "a\.vdb" is listed twice/,
    );
  });

  test('parseJsonObject keeps the JSON error as the cause; listedSegments answers undefined for non-manifests', () => {
    assert.throws(
      () => parseJsonObject('nope', 'x.json'),
      (e: unknown) => BagError.isInstance(e) && e.cause instanceof SyntaxError,
    );
    assert.equal(listedSegments('nope'), undefined);
    assert.equal(listedSegments('{"VLinkFiles": {}}'), undefined);
    assert.deepEqual(listedSegments('{"VLinkFiles": ["a.vdb", "../b.vdb", 3]}'), {
      names: ['a.vdb'],
      skipped: ['../b.vdb', 3],
    });
  });
});

// Left unpinned by the second mutation run (bench/results/mutation.md): each names what a surviving mutant broke.
describe('manifest parser: keys read and counts checked', () => {
  test('patch and tag are read from the header, not only defaulted', () => {
    const m = parse({ VLinkHeader: { major: 2, minor: 1, patch: 3, tag: 'drive' }, VLinkFiles: [] });
    assert.deepEqual(m.version, { major: 2, minor: 1, patch: 3 });
    assert.equal(m.tag, 'drive');
  });

  test('a count must be a non-negative safe integer: 0 is one; -5, 1.5 and 2^53 are noted and read as absent', () => {
    const zero = parse({ VLinkHeader: { count: 0, duration: 0 }, VLinkFiles: [] });
    assert.deepEqual([zero.count, zero.duration, zero.problems], [0, 0, []]);
    for (const bad of [-5, 1.5, 2 ** 53]) {
      const m = parse({ VLinkHeader: { count: bad }, VLinkFiles: [] });
      assert.equal(m.count, 0, String(bad));
      assert.deepEqual(m.problems, [`VLinkHeader.count is ${bad}, not a count`]);
    }
  });

  test('a null header or url entry is refused as not an object (not a TypeError)', () => {
    assert.match(refusal(JSON.stringify({ VLinkHeader: null, VLinkFiles: [] })), /has no VLinkHeader object/);
    assert.match(
      refusal(JSON.stringify({ VLinkHeader: {}, VLinkUrls: [null], VLinkFiles: [] })),
      /VLinkUrls\[0\] is not an object/,
    );
  });
});
