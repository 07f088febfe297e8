import assert from 'node:assert/strict';
import { BagError } from '@vlink/bag-core';
import { describe, test } from '@vlink/fixtures/test';
import { SkippedParts } from './skipped-parts.js';

const damage = (n: number) => new BagError('CORRUPT_FILE', `bad part ${n}`);

describe('SkippedParts', () => {
  test('no line when nothing was skipped', () => {
    assert.equal(new SkippedParts('chunk(s) that do not read').line('0 messages'), undefined);
  });

  test('counts every part and names the first five, with where; the aside goes before the names', () => {
    const skipped = new SkippedParts('chunk(s) that do not read');
    for (let n = 0; n < 7; n++) skipped.add(damage(n), 100 * n);
    assert.equal(skipped.count, 7);
    const names = [0, 1, 2, 3, 4].map((n) => `bad part ${n} (offset ${100 * n})`).join('; ');
    assert.equal(skipped.line('12 messages'), `7 chunk(s) that do not read skipped (12 messages): ${names}; …`);
  });

  test('five or fewer: all named, no ellipsis', () => {
    const skipped = new SkippedParts('section(s) that do not decode');
    skipped.add(damage(1), 7);
    assert.equal(skipped.line(), '1 section(s) that do not decode skipped: bad part 1 (offset 7)');
  });

  test('anything but a BagError is a bug and goes on up, uncounted', () => {
    const skipped = new SkippedParts('chunk(s) that do not read');
    assert.throws(() => skipped.add(new TypeError('oops'), 0), TypeError);
    assert.equal(skipped.count, 0);
  });
});
