import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { UrlIds } from './frame-admission.js';

describe('UrlIds', () => {
  test('one id per url for good, counted from 0 in order of first use, whatever string object carries it', () => {
    const ids = new UrlIds();
    const built = ['dds://', 'b'].join('');
    assert.deepEqual(
      ['dds://a', 'dds://b', 'dds://a', built, 'dds://c', 'dds://c', 'dds://a'].map((url) => ids.of(url)),
      [0, 1, 0, 1, 2, 2, 0],
    );
  });
});
