import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagReader } from '@vlink/bag';
import { runCli, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

// `record` never drops a frame for a full queue (it waits), so a frame the writer refuses is the frame's own fault —
// here a time past what the file stores exactly. It used to be one "1 dropped (source ended)" and exit 0.

const { tmp } = sampleBags();
const lines = ['{"timestamp":5,"url":"/a","data":"e30="}', '{"timestamp":1e17,"url":"/a","data":"e30="}'].join('\n');

describe('record: frames the writer refuses', () => {
  for (const ext of ['vdb', 'vcap']) {
    test(
      `.${ext}: said at once with its reason, counted by cause, exit 1; the good frames are kept`,
      SLOW,
      async () => {
        const out = tmp.path(`refused.${ext}`);
        const { code, stderr } = await runCli(['record', '--stdin', out], { input: `${lines}\n` });
        assert.equal(code, 1, stderr);
        assert.match(stderr, /warning: a frame was refused: timestamp 100000000000000000 µs is past/);
        assert.match(stderr, /1 frames \(.*\) recorded, 1 dropped \(limit 1\)/);
        const json = await runCli(['record', '--stdin', tmp.path(`refused-json.${ext}`), '--json'], {
          input: `${lines}\n`,
        });
        assert.equal(json.code, 1);
        const report = JSON.parse(json.stdout) as {
          frames: number;
          dropped: number;
          droppedBy: Record<string, number>;
        };
        assert.deepEqual([report.frames, report.dropped, report.droppedBy], [1, 1, { limit: 1 }]);
        const reader = await BagReader.create(out);
        try {
          assert.equal(reader.getInfo().messageCount, 1);
        } finally {
          reader.close();
        }
      },
    );
  }
});
