import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { copyBag, FIXTURES } from './testing/copy.js';
import { foreignPath } from './testing/expected.js';
import { type ReadFrame, readAll } from './testing/read-all.js';
import { registerAll } from './testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-interop-roundtrip-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A frame as every format keeps it; .vdb reads in time order, so lists are compared sorted. */
const kept = (frames: ReadFrame[]) =>
  frames.map((f) => `${f.url}|${f.timestamp}|${f.serType}|${f.schemaType}|${f.size}|${f.sha256}`).sort();

describe('foreign → .vdb → .vcap and → .mcap keep every message (url, time, type, family, payload bytes)', () => {
  for (const fixture of FIXTURES) {
    test(fixture, async () => {
      const name = fixture.replace(/[/.]/g, '_');
      const source = await readAll(foreignPath(fixture));
      const start = source.reader.getInfo().startTimestamp;
      source.reader.close();
      const vdb = join(dir, `${name}.vdb`);
      await copyBag(foreignPath(fixture), vdb);
      const fromVdb = await readAll(vdb);
      const vcap = join(dir, `${name}.vcap`);
      await copyBag(vdb, vcap);
      const fromVcap = await readAll(vcap);
      const mcap = join(dir, `${name}.mcap`);
      await copyBag(vdb, mcap);
      const fromMcap = await readAll(mcap);
      try {
        assert.deepEqual(kept(fromMcap.frames), kept(source.frames));
        assert.equal(fromMcap.reader.getInfo().startTimestamp, start);
        assert.ok(source.frames.length > 10);
        assert.deepEqual(kept(fromVdb.frames), kept(source.frames));
        assert.deepEqual(kept(fromVcap.frames), kept(source.frames));
        assert.equal(fromVdb.reader.getInfo().startTimestamp, start);
        assert.equal(fromVcap.reader.getInfo().startTimestamp, start);
      } finally {
        fromVdb.reader.close();
        fromVcap.reader.close();
        fromMcap.reader.close();
      }
    });
  }
});
