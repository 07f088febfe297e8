import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ulogDecoder } from './ulog.js';

// The schema is the reader's: the message's format line and its nested types' lines, one per line.
describe('ulogDecoder', () => {
  test('nested types (single and array), blank schema lines and padding fields', () => {
    const formats = [
      'pos:float x;float y;',
      '',
      '  ',
      'state:uint64_t timestamp;pos here;pos[2] trail;uint8_t[3] _padding0;uint8_t mode;',
    ].join('\n');
    const decoder = ulogDecoder('state', formats);
    const bytes = new Uint8Array(8 + 8 + 16 + 3 + 1);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(0, 123n, true);
    for (const [i, v] of [1.5, 2.5, 3.5, 4.5, 5.5, 6.5].entries()) view.setFloat32(8 + i * 4, v, true);
    view.setUint8(35, 7);
    assert.deepEqual(decoder.decode(bytes), {
      timestamp: 123n,
      here: { x: 1.5, y: 2.5 },
      trail: [
        { x: 3.5, y: 4.5 },
        { x: 5.5, y: 6.5 },
      ],
      mode: 7,
    });
  });

  test('a schema without the named format is refused by name', () => {
    assert.throws(() => ulogDecoder('missing', 'other:uint8_t a;'), /no ULog format for missing/);
  });

  test('a field whose nested type the schema lacks is refused by name when decoded', () => {
    const decoder = ulogDecoder('outer', 'outer:uint64_t timestamp;ghost g;');
    assert.throws(() => decoder.decode(new Uint8Array(16)), /Unknown type ghost/);
  });
});
