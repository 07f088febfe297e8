import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SharedBuffers } from './shared-buffers.js';

/** Reuse of the helper thread's shared buffers (Deno): never one that is copied out of or may still be written. */
describe('SharedBuffers', () => {
  test('a source alternates two buffers: the next prefetch never goes into the one being copied out', () => {
    const buffers = new SharedBuffers();
    const first = buffers.forPrefetch(1, 1000);
    assert.equal(buffers.take(1), first);
    // Asked for while `first` is copied out (ask's beforeCopy).
    const second = buffers.forPrefetch(1, 1000);
    assert.notEqual(second, first);
    buffers.taken(1, first);
    assert.equal(buffers.take(1), second);
    assert.equal(buffers.forPrefetch(1, 1000), first, 'the copied-out buffer is reused');
    buffers.taken(1, second);
    assert.equal(buffers.take(1), first);
    assert.equal(buffers.forPrefetch(1, 500), second, 'a larger spare serves a smaller prefetch');
  });

  test('a spare too small is replaced; sources do not share buffers', () => {
    const buffers = new SharedBuffers();
    const small = buffers.forPrefetch(1, 100);
    buffers.take(1);
    buffers.taken(1, small);
    const large = buffers.forPrefetch(1, 200);
    assert.notEqual(large, small);
    assert.equal(large.byteLength, 200);
    assert.notEqual(buffers.forPrefetch(2, 100), small);
  });

  test('a dropped prefetch, or a get that got no answer, gives its buffer up', () => {
    const buffers = new SharedBuffers();
    const dropped = buffers.forPrefetch(1, 100);
    buffers.drop(1);
    assert.equal(buffers.take(1), undefined);
    assert.notEqual(buffers.forPrefetch(1, 100), dropped);
    const get = buffers.forGet(100);
    assert.equal(buffers.forGet(50), get, 'gets reuse their buffer (the asker waits for each)');
    assert.notEqual(buffers.forGet(200), get);
    const waited = buffers.forGet(10);
    buffers.abandonGet();
    assert.notEqual(buffers.forGet(10), waited);
  });
});
