import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { vlinkFlagAliases } from './lib/aliases.js';
import { splitList } from './lib/list-option.js';

describe('VLink flag spellings', () => {
  test('underscored and renamed long flags map onto ours; values and positionals stay', () => {
    assert.deepEqual(
      vlinkFlagAliases([
        'play',
        'a_b.vdb',
        '--begin_time',
        '1',
        '--end_time=2',
        '--skip_blank',
        '-u',
        'dds://x_y',
        '--wal_mode',
        '--split_by_size=0.5',
        '--local_begin_time',
        '2026-03-17 10:00:00',
        '--',
        '--not_a_flag',
      ]),
      [
        'play',
        'a_b.vdb',
        '--begin',
        '1',
        '--end=2',
        '--skip-blank',
        '-u',
        'dds://x_y',
        '--wal',
        '--split-by-size=0.5',
        '--local-begin-time',
        '2026-03-17 10:00:00',
        '--',
        '--not_a_flag',
      ],
    );
    assert.deepEqual(
      vlinkFlagAliases(['record', 'x.vdb', '--sync_mode', '--max_split_count', '3', '--cache_size', '8']),
      ['record', 'x.vdb', '--sync', '--max-split-count', '3', '--cache-size', '8'],
    );
    assert.deepEqual(vlinkFlagAliases(['split', '--white-channel', '/a', '--black-channel', '/b']), [
      'split',
      '--urls',
      '/a',
      '--skip-urls',
      '/b',
    ]);
  });

  test('optional values are taken only as --flag=value (or a closed keyword), never the next path', () => {
    assert.deepEqual(vlinkFlagAliases(['info', '--gaps', 'drive.vdb']), ['info', '--gaps=', 'drive.vdb']);
    assert.deepEqual(vlinkFlagAliases(['info', 'drive.vdb', '--gaps=3']), ['info', 'drive.vdb', '--gaps=3']);
    assert.throws(() => vlinkFlagAliases(['info', 'drive.vdb', '--gaps', '3']), /--gaps=3/);
    assert.deepEqual(vlinkFlagAliases(['play', '--serve', 'x.vdb']), ['play', '--serve=', 'x.vdb']);
    assert.throws(() => vlinkFlagAliases(['play', 'x.vdb', '--serve', '127.0.0.1:0']), /--serve=127\.0\.0\.1:0/);
    assert.deepEqual(vlinkFlagAliases(['clone', 'a.vdb', '-p', 'b.vdb']), ['clone', 'a.vdb', '--compress=', 'b.vdb']);
    assert.deepEqual(vlinkFlagAliases(['clone', 'a.vdb', 'b.vdb', '-p', 'ZSTD']), [
      'clone',
      'a.vdb',
      'b.vdb',
      '--compress=ZSTD',
    ]);
    // Other verbs' -p is not touched.
    assert.deepEqual(vlinkFlagAliases(['serve', '-p', 'x']), ['serve', '-p', 'x']);
  });

  test('list values split on commas and accumulate over repeats', () => {
    assert.deepEqual(splitList('/a, /b,,/c', undefined), ['/a', '/b', '/c']);
    assert.deepEqual(splitList('/d', ['/a']), ['/a', '/d']);
  });
});
