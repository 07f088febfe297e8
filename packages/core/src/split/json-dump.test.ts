import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { dumpJson, formatJsonDouble } from './json-dump.js';

describe('formatJsonDouble (nlohmann to_chars)', () => {
  const cases: Array<[number, string]> = [
    [0, '0.0'],
    [-0, '-0.0'],
    [10, '10.0'],
    [0.25, '0.25'],
    [-1, '-1.0'],
    [99.5, '99.5'],
    [1 / 3, '0.3333333333333333'],
    [0.001, '0.001'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [123456789012345, '123456789012345.0'],
    [1e15, '1e+15'],
    [1234567890123456, '1.234567890123456e+15'],
    [1.5e300, '1.5e+300'],
    [5e-324, '5e-324'],
    [Number.NaN, 'null'],
    [Number.POSITIVE_INFINITY, 'null'],
  ];
  for (const [value, text] of cases) {
    test(`${value} → ${text}`, () => assert.equal(formatJsonDouble(value), text));
  }
});

describe('dumpJson (ordered_json dump(4))', () => {
  test('indents by four, keeps key order and empty containers, doubles only for float keys', () => {
    const text = dumpJson(
      { b: 1, a: { loss: 0, count: 3, freq: 12 }, list: [], obj: {}, s: 'ü"\n\u001f', xs: [1, true, null] },
      { floatKeys: new Set(['loss', 'freq']) },
    );
    assert.equal(
      text,
      [
        '{',
        '    "b": 1,',
        '    "a": {',
        '        "loss": 0.0,',
        '        "count": 3,',
        '        "freq": 12.0',
        '    },',
        '    "list": [],',
        '    "obj": {},',
        '    "s": "ü\\"\\n\\u001f",',
        '    "xs": [',
        '        1,',
        '        true,',
        '        null',
        '    ]',
        '}',
      ].join('\n'),
    );
  });

  test('a non-integral number is a double whatever its key', () => {
    assert.equal(dumpJson([1.5, 2]), '[\n    1.5,\n    2\n]');
  });
});
