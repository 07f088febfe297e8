import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BagError } from './errors.js';

describe('BagError', () => {
  test('carries code and context', () => {
    const e = new BagError('CORRUPT_FILE', 'bad', { file: 'a.vdb', offset: 3 });
    assert.equal(e.code, 'CORRUPT_FILE');
    assert.match(e.message, /file a\.vdb, offset 3/);
    assert.ok(BagError.isInstance(e));
    assert.ok(!BagError.isInstance(new Error('x')));
  });
});
