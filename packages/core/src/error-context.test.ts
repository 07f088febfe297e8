import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from './errors.js';

describe('BagError context: fields beside a clean message', () => {
  test('file, offset and url are fields; message adds them as a suffix; reason and detail leave it out', () => {
    const error = new BagError('CORRUPT_DATA', 'bad chunk', { file: 'a.vcap', offset: 42, url: '/cam' });
    assert.deepEqual([error.file, error.offset, error.url], ['a.vcap', 42, '/cam']);
    assert.equal(error.message, 'bad chunk (file a.vcap, offset 42, url /cam)');
    assert.equal(error.reason, 'bad chunk');
    assert.equal(error.detail, 'bad chunk');
  });

  test("a wrapped error's text is in message and detail, not in reason", () => {
    const error = BagError.wrap(new Error('disk I/O error'), 'IO_ERROR', 'cannot commit', { file: 'b.vdb' });
    assert.equal(error.message, 'cannot commit: disk I/O error (file b.vdb)');
    assert.equal(error.detail, 'cannot commit: disk I/O error');
    assert.equal(error.reason, 'cannot commit');
    assert.equal(BagError.wrap(error, 'INTERNAL', 'again'), error, 'a BagError is kept as it is');
  });
});
