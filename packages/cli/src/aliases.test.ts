import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { vlinkFlagAliases } from './lib/aliases.js';

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
        '--',
        '--not_a_flag',
      ],
    );
    assert.deepEqual(
      vlinkFlagAliases(['record', 'x.vdb', '--sync_mode', '--max_split_count', '3', '--cache_size', '8']),
      ['record', 'x.vdb', '--sync', '--max-split-count', '3', '--cache-size', '8'],
    );
  });
});
