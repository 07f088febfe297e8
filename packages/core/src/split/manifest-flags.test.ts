import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { listedSegments, parseJsonObject, parseManifest } from './manifest-parse.js';

/** A minimal manifest with the given header fields (VLink writes `complete` only for split recordings). */
const manifestText = (header: Record<string, unknown>) =>
  JSON.stringify({ VLinkHeader: { date: '2026/03/17 10:00:00:123', ...header }, VLinkUrls: [], VLinkFiles: ['a.vdb'] });

describe('manifest parser: the complete flag', () => {
  // Kills the mutant that reads `complete` inverted: a recording cut short (complete false) must not be taken for a
  // clean one, or the reader skips the recovery of segments the manifest does not list yet.
  test('"complete": false reads false, true reads true, absent reads VLink\'s default true', () => {
    assert.equal(parseManifest(manifestText({ complete: false }), 'x.vdbx', 'vdbx').complete, false);
    assert.equal(parseManifest(manifestText({ complete: true }), 'x.vdbx', 'vdbx').complete, true);
    assert.equal(parseManifest(manifestText({}), 'x.vcapx', 'vcapx').complete, true);
  });
});

describe('manifest parser: a UTF-8 byte order mark', () => {
  // Editors on Windows save JSON with a BOM; JSON.parse rejects one, so the parser strips it first.
  const text = manifestText({ complete: false, count: 7 });
  const withBom = `\uFEFF${text}`;

  test('a manifest with a BOM parses exactly like the same text without one', () => {
    assert.deepEqual(parseManifest(withBom, 'x.vdbx', 'vdbx'), parseManifest(text, 'x.vdbx', 'vdbx'));
    assert.equal(parseManifest(withBom, 'x.vdbx', 'vdbx').count, 7);
  });

  test('parseJsonObject and listedSegments strip it too, and only at the start', () => {
    assert.deepEqual(parseJsonObject(withBom, 'x.json'), JSON.parse(text));
    assert.deepEqual(listedSegments(withBom), { names: ['a.vdb'], skipped: [] });
    assert.throws(() => parseJsonObject(`${text}\uFEFF`, 'x.json'), /CORRUPT|manifest|JSON/i);
    assert.equal(listedSegments(` \uFEFF${text}`), undefined, 'a BOM after other text is not a BOM');
  });
});
