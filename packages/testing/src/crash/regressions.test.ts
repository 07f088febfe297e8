import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, parseManifest, registeredExtensions } from '@vlink/bag';
import { buildBases, type FuzzFormat, makeCase, runCase } from './fuzz.js';

// One test per bug the crash and fuzz harnesses found, so each fix stays fixed (the cases are described in the
// package README, "Crash safety"). Regressions covered by a whole harness case are named there instead:
// a durable push resolving for rolled-back frames (same-thread queue) → disk-full.test.ts, ".vdb … (queue mode)";
// Deno's node:sqlite iterate() ending quietly on a damaged page → backend-sqlite vdb/recover.test.ts.

describe('fuzz regressions', () => {
  test('a manifest listing a segment twice is CORRUPT_FILE (it made the reader open that segment once per entry)', () => {
    const manifest = (files: string[]) =>
      JSON.stringify({ VLinkHeader: { major: 2 }, VLinkUrls: [], VLinkFiles: files });
    assert.equal(parseManifest(manifest(['a.1.vdb', 'a.2.vdb']), 'a.vdbx', 'vdbx').files.length, 2);
    assert.throws(
      () => parseManifest(manifest(['a.1.vdb', 'a.2.vdb', 'a.1.vdb']), 'a.vdbx', 'vdbx'),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /VLinkFiles\[2\].*listed twice/.test(e.message),
    );
  });
});

// Fuzz cases replayed as they were found (format, seed, case), each a finding before its fix.
const REPLAYED: Array<[FuzzFormat, number, number, string]> = [
  ['.vdb', 41, 1363, 'a damaged b-tree handing out rowid 0: the salvage walk looped 10,000 times, copying rows again'],
  ['.vdb', 41, 14, 'a schema row without a name: the repaired copy failed its own check (INTERNAL)'],
  ['.vdb', 41, 1015, 'a url row without a name: the repaired copy failed its own check (INTERNAL)'],
  ['.vdb', 41, 1576, 'a file cut inside a page: the salvage dropped the 40 intact rows of that page'],
  ['.vdb', 105, 8422, 'a page whose cell count became 1,280: the rowid walk lost a row a reader read by the index'],
  ['.vdb', 112, 6581, 'the same, and a damaged cell of rowid 1,463 moved the walk past 80 readable rows'],
  ['.vdb', 1205, 2774, 'a probe past damage answered rowid 0: the repair copied every row 10,000 times (540,000)'],
  ['.vdb', 1209, 574, 'a header row overwritten, start_timestamp negative: the repaired copy failed check (INTERNAL)'],
  [
    '.vdbx',
    1212,
    14980,
    'a damaged cell read as a row of time 1.7e18 µs: the repaired manifest failed check (INTERNAL)',
  ],
  ['.vdb', 1420, 1475, 'a page count garbled in the header: the repair failed on PRAGMA page_count (INTERNAL)'],
  ['.vdb', 1420, 1398, 'the page size garbled: the repair failed on PRAGMA page_count, "not a database" (INTERNAL)'],
  ['.vcap', 41, 795, 'a message index grown to 4,118 bytes: the salvage walk skipped the chunk after it'],
  ['.vcap', 47, 1183, 'a message index turned into a DataEnd by one flipped bit: the repair lost 12 readable messages'],
  ['.vcap', 50, 1998, 'the VLinkHeader name garbled in a file cut before its summary: every frame time moved'],
  ['.vcap', 51, 3487, 'a zeroed opcode in a file without chunks: the repair skipped the 42 loose messages after it'],
  ['.vcap', 51, 488, 'flipped bits in a file without chunks: the repair kept 25 of 159 readable messages'],
  ['.vcap', 1206, 2173, 'a Message made a Header by one bit, no chunks: the repair lost the 12 messages after it'],
  ['.vcap', 62, 1249, 'VLinkHeader unparsable, summary damaged: the repair moved every frame to the first'],
  ['.vcap', 63, 1761, 'MCAP header zeroed with the VLinkHeader: the repair wrote a plain MCAP, frames 41 ms early'],
  ['.vcap', 55, 3633, 'a garbled digit of the VLinkHeader start_timestamp: every frame read 1 ms early, as sound'],
  ['.vcap', 62, 2366, 'the same in a file with a damaged chunk: the frames kept read with shifted times'],
  ['.vcap', 82, 3313, 'the MCAP profile garbled: the recording read as a foreign MCAP, every frame 1 ms early'],
  ['.vcap', 99, 7632, 'start and summary garbled, a chunk lost: the sidecar unconfirmed, every frame 1 ms early'],
  ['.vcap', 99, 18740, '2,205 zeroed bytes in a file without chunks: the repair kept 85 of 155 readable messages'],
  [
    '.vcap',
    1479,
    1298,
    "a chunk copied over the next, its length past a finished file's end: fix kept a message with foreign bytes",
  ],
  ['.vcap', 1484, 4399, 'the VLinkHeader opcode flipped: a tryToFix read moved every frame 1 ms early, as sound'],
  ['.vcapx', 52, 2390, 'a first segment cut inside its header: every later frame got its absolute time'],
  ['.vcapx', 52, 1069, 'the same, cut earlier: a manifest duration the repair then refused as its own (INTERNAL)'],
  [
    '.vcapx',
    84,
    2295,
    'a garbled start in the first segment’s VLinkHeader: every frame of the recording moved (tryToFix)',
  ],
  [
    '.vcapx',
    84,
    4855,
    'the same repaired by fix(): the header resealed with the wrong start, frames got absolute times',
  ],
  ['.vcapx', 92, 7961, 'a message index turned into a SummaryOffset: the repair skipped the chunk after it (9 of 160)'],
  ['.vcapx', 41, 419, 'a record with an unknown opcode claiming the chunk after it: 7 readable messages lost'],
  ['.vcapx', 1206, 764, 'a chunk copied over other bytes: fix() kept its 5 messages twice (162 of 160)'],
  [
    '.vcapx',
    1407,
    958,
    'a chunk copied over a damaged one: a tryToFix read yielded its 10 messages twice (167 of 160)',
  ],
  ['foreign', 64, 849, 'a ROS 1 chunk info count made huge by one byte: 40 GiB of arrays allocated for one chunk'],
  ['foreign', 21, 29, 'a ULog info message whose key runs past it: an untyped RangeError'],
  ['foreign', 1207, 18, 'an 8-byte rosbag2 .db3.zstd whose frame header asks for a 480 MiB window: 963 MiB allocated'],
  ['foreign', 1212, 24184, 'a rosbag2 .db3 whose messages table lost its id column: an untyped SqliteError'],
];

describe('fuzz cases replayed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-fuzz-replay-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const bases = new Map<FuzzFormat, ReturnType<typeof buildBases>>();
  for (const [format, seed, index, what] of REPLAYED) {
    const registered = registeredExtensions().includes(format === 'foreign' ? '.bag' : format);
    test(`${format} seed ${seed} case ${index}: ${what}`, {
      skip: !registered && 'backend not registered',
    }, async () => {
      if (!bases.has(format)) bases.set(format, buildBases(format, join(dir, `bases-${format.replace('.', '')}`)));
      const fuzzCase = makeCase(await bases.get(format)!, seed, index);
      const outcome = await runCase(fuzzCase, join(dir, `case-${index}`));
      assert.equal(outcome.status, 'ok', `${fuzzCase.mutation}: ${outcome.kind}: ${outcome.detail}`);
    });
  }
});
