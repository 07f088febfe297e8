import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BagReader } from '@vlink/bag';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { type AlignOptions, alignTable, type MatchPolicy, type MissingPolicy, openAlignment } from './index.js';
import { type JsonMessage, writeJsonBag } from './testing/json-bag.js';

// A base url /cam at 1000, 2000, 3000, 4000 µs and a /state url at 900, 1600, 2100, 2900 µs, tolerance 700 µs.
// Every expected table below was worked out by hand from these eight messages (README "Matching").

const dir = mkdtempSync(join(tmpdir(), 'vlink-align-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const state = (x: number, mode: string) => ({ x, mode, pose: { y: 2 * x } });
const CAM: JsonMessage[] = [1000, 2000, 3000, 4000].map((log, i) => ({ url: '/cam', log, value: { seq: i + 1 } }));
const STATE: Array<[number, ReturnType<typeof state>]> = [
  [900, state(9, 'a')],
  [1600, state(16, 'b')],
  [2100, state(21, 'c')],
  [2900, state(29, 'd')],
];

// columns: time, /cam.seq, /state#time, /state.x, /state.mode, /state.pose.y
type Row = [number, number, number | null, number | null, string | null, number | null];
const N = [null, null, null, null] as const;

/** The matches of each policy at the four base times, with missing rows as nulls (the `null` policy). */
const NULL_TABLES: Record<MatchPolicy, Row[]> = {
  previous: [
    [1000, 1, 900, 9, 'a', 18],
    [2000, 2, 1600, 16, 'b', 32], // 1600 is 400 µs before; 2100 is after, so not "previous"
    [3000, 3, 2900, 29, 'd', 58],
    [4000, 4, ...N], // 2900 is 1100 µs back: beyond the tolerance
  ],
  nearest: [
    [1000, 1, 900, 9, 'a', 18], // 100 µs back beats 600 µs ahead
    [2000, 2, 2100, 21, 'c', 42], // 100 µs ahead beats 400 µs back
    [3000, 3, 2900, 29, 'd', 58],
    [4000, 4, ...N],
  ],
  linear: [
    [1000, 1, 1000, 10, 'a', 20], // between 900 and 1600: 1/7 of the way; the string is the earlier one's
    [2000, 2, 2000, 20, 'b', 40], // between 1600 and 2100: 4/5 of the way
    [3000, 3, ...N], // no sample after 2900
    [4000, 4, ...N],
  ],
};

/** Hand-written too: `drop` leaves out the rows with nulls; `ffill` repeats the url's last written values. */
const TABLES: Record<MissingPolicy, Record<MatchPolicy, Row[]>> = {
  null: NULL_TABLES,
  drop: {
    previous: NULL_TABLES.previous.slice(0, 3),
    nearest: NULL_TABLES.nearest.slice(0, 3),
    linear: NULL_TABLES.linear.slice(0, 2),
  },
  ffill: {
    previous: [...NULL_TABLES.previous.slice(0, 3), [4000, 4, 2900, 29, 'd', 58]],
    nearest: [...NULL_TABLES.nearest.slice(0, 3), [4000, 4, 2900, 29, 'd', 58]],
    linear: [...NULL_TABLES.linear.slice(0, 2), [3000, 3, 2000, 20, 'b', 40], [4000, 4, 2000, 20, 'b', 40]],
  },
};

const logBag = join(dir, 'log.vcap');
// The same messages on publish times, logged later and out of publish order (2100 is received before 1600).
const publishBag = join(dir, 'publish.vdb');

before(async () => {
  const stateMessages = STATE.map(([t, value]) => ({ url: '/state', log: t, value }));
  await writeJsonBag(logBag, [...CAM, ...stateMessages]);
  const late: Record<number, number> = { 900: 950, 1600: 2500, 2100: 2200, 2900: 3100 };
  await writeJsonBag(publishBag, [
    ...CAM.map((m) => ({ ...m, log: m.log + 10, publish: m.log })),
    ...STATE.map(([t, value]) => ({ url: '/state', log: late[t]!, publish: t, value })),
  ]);
});

async function table(path: string, options: AlignOptions) {
  const reader = await BagReader.create(path);
  try {
    return await alignTable(reader, options);
  } finally {
    await reader.close();
  }
}

describe('align: each matching policy under each missing policy equals the hand-computed table', () => {
  for (const missing of ['null', 'drop', 'ffill'] as const) {
    for (const policy of ['previous', 'nearest', 'linear'] as const) {
      test(`${policy} / ${missing}, log times`, async () => {
        const { columns, rows, description } = await table(logBag, {
          base: { url: '/cam' },
          match: { '/state': policy },
          toleranceUs: 700,
          missing,
        });
        assert.deepEqual(
          columns.map((c) => `${c.name}:${c.type}`),
          [
            'time:timestamp',
            '/cam.seq:double',
            '/state#time:timestamp',
            '/state.x:double',
            '/state.mode:string',
            '/state.pose.y:double',
          ],
        );
        assert.deepEqual(rows, TABLES[missing][policy]);
        const expected = TABLES[missing][policy];
        assert.equal(description.rows, expected.length);
        assert.equal(description.droppedRows, 4 - expected.length);
        const missingRows = NULL_TABLES[policy].filter((r) => r[2] === null).length;
        assert.equal(description.urls['/state']!.missing, missingRows);
        assert.equal(description.urls['/state']!.filled, missing === 'ffill' ? missingRows : 0);
        assert.equal(description.urls['/state']!.interpolated, policy === 'linear' ? 2 : 0);
      });
    }
  }

  for (const policy of ['previous', 'nearest', 'linear'] as const) {
    test(`${policy}: publish times, received late and out of order, give the same table`, async () => {
      const { rows, description } = await table(publishBag, {
        base: { url: '/cam' },
        timeBase: 'publish',
        match: { '/state': policy },
        toleranceUs: 700,
      });
      assert.deepEqual(rows, NULL_TABLES[policy]);
      assert.equal(description.urls['/state']!.late, 0);
      assert.equal(description.parameters.timeBase, 'publish');
    });
  }

  test('the same publish-time bag on log times matches other samples', async () => {
    const { rows } = await table(publishBag, { base: { url: '/cam' }, match: { '/state': 'previous' } });
    // log times: /cam 1010.., /state 950 (x9), 2200 (x21), 2500 (x16), 3100 (x29)
    assert.deepEqual(
      rows.map((r) => [r[0], r[3]]),
      [
        [1010, 9],
        [2010, 9],
        [3010, 16],
        [4010, 29],
      ],
    );
  });

  test('a reorder window too small for the disorder leaves the late sample out and counts it', async () => {
    const { rows, description } = await table(publishBag, {
      base: { url: '/cam' },
      timeBase: 'publish',
      match: { '/state': 'previous' },
      reorderWindowUs: 0,
    });
    assert.equal(description.urls['/state']!.late, 1); // 1600 arrives after 2100 was released
    assert.deepEqual(
      rows.map((r) => [r[0], r[2]]),
      [
        [1000, 900],
        [2000, 900],
        [3000, 2900],
        [4000, 2900],
      ],
    );
  });
});

describe('align: a fixed-rate base', () => {
  test('ticks from the earliest sample to the latest, every 1000 µs', async () => {
    const { columns, rows } = await table(logBag, {
      base: { rateHz: 1000 },
      match: { '/state': 'previous', '/cam': 'nearest' },
      toleranceUs: 700,
    });
    assert.deepEqual(
      columns.map((c) => c.name),
      ['time', '/state#time', '/state.x', '/state.mode', '/state.pose.y', '/cam#time', '/cam.seq'],
    );
    assert.deepEqual(rows, [
      [900, 900, 9, 'a', 18, 1000, 1],
      [1900, 1600, 16, 'b', 32, 2000, 2],
      [2900, 2900, 29, 'd', 58, 3000, 3],
      [3900, null, null, null, null, 4000, 4], // 2900 is 1000 µs back
    ]);
  });

  test('nearest takes the earlier sample on a tie; linear halfway is the mean', async () => {
    const at1850 = { base: { rateHz: 1000 }, startUs: 1850, endUs: 1850 } as const;
    const nearest = await table(logBag, { ...at1850, match: { '/state': 'nearest' } });
    assert.deepEqual(nearest.rows, [[1850, 1600, 16, 'b', 32]]); // 250 µs from 1600 and from 2100
    const linear = await table(logBag, { ...at1850, match: { '/state': 'linear' } });
    assert.deepEqual(linear.rows, [[1850, 1850, 18.5, 'b', 37]]);
  });

  test('a 1 MHz rate comes in batches of at most 4096 rows, and the event loop runs between them', async () => {
    // 50 ms between two samples: 50,001 ticks, all ready at once when the bag ends. They once came as one batch
    // (9 million rows for a 9 s bag: 430 MB of CSV, then "Invalid string length", the server's thread held).
    const long = join(dir, 'long.vcap');
    await writeJsonBag(long, [
      { url: '/a', log: 1000, value: { x: 1 } },
      { url: '/a', log: 51_000, value: { x: 2 } },
    ]);
    const reader = await BagReader.create(long);
    try {
      const alignment = await openAlignment(reader, { base: { rateHz: 1e6 }, match: { '/a': 'previous' } });
      let turns = 0;
      const timer = setInterval(() => turns++, 0);
      let expected = 1000;
      let largest = 0;
      try {
        for await (const batch of alignment.rows()) {
          largest = Math.max(largest, batch.length);
          for (const row of batch) assert.equal(row[0], expected++);
        }
      } finally {
        clearInterval(timer);
      }
      assert.equal(expected, 51_001, 'every tick once, in order');
      assert.ok(largest <= 4096, `largest batch ${largest}`);
      assert.ok(turns > 0, 'timers ran while the rows were made');
    } finally {
      reader.close();
    }
  });

  test('startUs and endUs bound the ticks', async () => {
    const { rows } = await table(logBag, {
      base: { rateHz: 2000 },
      match: { '/state': 'nearest' },
      startUs: 1500,
      endUs: 2600,
      toleranceUs: 100,
    });
    assert.deepEqual(rows, [
      [1500, 1600, 16, 'b', 32],
      [2000, 2100, 21, 'c', 42],
      [2500, null, null, null, null], // 400 µs from both neighbours
    ]);
  });
});
