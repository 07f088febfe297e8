import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { UrlIdCache } from './url-id-cache.js';

describe('UrlIdCache', () => {
  const setup = () => {
    const state = new Map([['dds://a', { n: 1 }]]);
    const lookups: string[] = [];
    const cache = new UrlIdCache((url: string) => {
      lookups.push(url);
      return state.get(url);
    });
    return { state, lookups, cache };
  };

  test('looks a url up once per id, then answers from the id', () => {
    const { state, lookups, cache } = setup();
    assert.equal(cache.get(5, 'dds://b'), undefined, 'no state yet: nothing cached');
    state.set('dds://b', { n: 2 });
    assert.equal(cache.get(5, 'dds://b'), state.get('dds://b'));
    assert.equal(cache.get(5, 'dds://b'), state.get('dds://b'));
    assert.equal(cache.get(0, 'dds://a'), state.get('dds://a'));
    assert.equal(cache.get(0, 'dds://a'), state.get('dds://a'));
    assert.deepEqual(lookups, ['dds://b', 'dds://b', 'dds://a']);
  });

  test('a wrong id costs a lookup, never another url state; clear forgets', () => {
    const { state, lookups, cache } = setup();
    state.set('dds://b', { n: 2 });
    cache.get(1, 'dds://a');
    assert.equal(cache.get(1, 'dds://b'), state.get('dds://b'), 'id 1 named dds://a before');
    assert.equal(cache.get(-1, 'dds://a'), state.get('dds://a'));
    assert.equal(cache.get(-1, 'dds://a'), state.get('dds://a'), 'not an index: never cached');
    cache.clear();
    cache.get(1, 'dds://b');
    assert.deepEqual(lookups, ['dds://a', 'dds://b', 'dds://a', 'dds://a', 'dds://b']);
  });

  test('byId holds what get cached, by id, and empties on clear', () => {
    const { state, cache } = setup();
    assert.equal(cache.byId[0], undefined);
    cache.get(0, 'dds://a');
    cache.get(-1, 'dds://a');
    assert.equal(cache.byId[0], state.get('dds://a'));
    assert.equal(cache.byId.length, 1, 'a non-index id is never stored');
    cache.clear();
    assert.equal(cache.byId[0], undefined);
  });
});
