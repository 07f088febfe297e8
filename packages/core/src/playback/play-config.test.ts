import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { resolvePlayConfig } from './play-config.js';

describe('resolvePlayConfig', () => {
  test("VLink's clamps: a rate <= 0 plays at 1, times are whole, negative windows start at 0", () => {
    const c = resolvePlayConfig({ rate: -2, times: 2.7, beginTime: -5, endTime: -1, filterUrls: ['dds://a'] });
    assert.deepEqual([c.rate, c.times, c.beginTime, c.endTime, c.filterUrls], [1, 2, 0, 0, ['dds://a']]);
  });

  // Before, `filterUrls: 'dds://a'` played the urls named by the string's characters (none of them).
  test('a wrong type is INVALID_ARGUMENT naming the field', () => {
    for (const [config, message] of [
      [{ rate: '2' }, /^play config rate must be a finite number, got 2$/],
      [{ times: Number.NaN }, /^play config times must be a finite number/],
      [{ filterUrls: 'dds://a' }, /^filterUrls must be an array of url strings$/],
      [{ filterUrls: [1] }, /^filterUrls must be an array of url strings$/],
      [{ timeBase: 'wall' }, /^timeBase must be 'log' or 'publish'/],
    ] as const)
      assert.throws(() => resolvePlayConfig(config as never), { name: 'BagError', code: 'INVALID_ARGUMENT', message });
  });
});
