import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagReader, BagWriter, infoProblems, SchemaType } from './index.js';

// A tryToFix read of a split recording with one damaged segment: the segment's reader reads around the damage and
// says what it lost, and the recording's info says it too (`<flavor>.problems`, each line naming its segment), with
// the totals the segments read. Without it, a copy of such a recording lost frames without a word (found by hand once
// the segments read around their damage: a .vcapx with one flipped byte in a chunk of its first segment, 126 of 3,000
// frames; a .vdbx with 4 KiB zeroed, 256).
const dir = mkdtempSync(join(tmpdir(), 'vlink-read-around-split-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const COUNT = 3000;

async function record(path: string): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true, cacheSize: 16 * 1024, splitBySize: 100_000 });
  for (let i = 0; i < COUNT; i++)
    writer.push({
      timestamp: i * 1000,
      url: `dds://t${i % 3}`,
      data: new Uint8Array(100).fill(i & 255),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
}

function flipMiddleByte(bytes: Buffer): Buffer {
  bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
  return bytes;
}

describe('a tryToFix read of a split recording with a damaged segment', () => {
  for (const [ext, seg, damage] of [
    ['.vcapx', '.vcap', flipMiddleByte],
    ['.vdbx', '.vdb', (b: Buffer) => b.fill(0, b.length >> 1, (b.length >> 1) + 4096)],
  ] as const) {
    test(`${ext}: the frames read are counted, and the loss is named with its segment`, async () => {
      const path = join(dir, `rec${ext}`);
      await record(path);
      const first = join(dir, `rec.1${seg}`);
      writeFileSync(first, damage(readFileSync(first)));
      const reader = await BagReader.create(path, { tryToFix: true });
      try {
        const times: number[] = [];
        for await (const f of reader.frames()) times.push(f.timestamp);
        assert.equal(new Set(times).size, times.length, 'no frame twice');
        assert.ok(times.length > COUNT / 2 && times.length < COUNT, `${times.length} of ${COUNT}`);
        const info = reader.getInfo();
        assert.equal(info.messageCount, times.length, 'the segments count what they read');
        assert.equal(
          info.urls.reduce((n, u) => n + u.count, 0),
          times.length,
        );
        assert.equal(info.hasCompleted, false);
        const problems = infoProblems(info);
        assert.ok(problems.length > 0 && problems.every((p) => p.startsWith(`rec.1${seg}: `)), problems.join('\n'));
        assert.ok(
          info.metadata?.some((m) => m.name === `${ext.slice(1)}.problems`),
          JSON.stringify(info.metadata),
        );
      } finally {
        reader.close();
      }
      // A whole recording lists nothing.
      const whole = join(dir, `whole${ext}`);
      await record(whole);
      const intact = await BagReader.create(whole, { tryToFix: true });
      try {
        assert.equal(intact.getInfo().messageCount, COUNT);
        assert.equal(intact.getInfo().metadata, undefined);
      } finally {
        intact.close();
      }
    });
  }
});
