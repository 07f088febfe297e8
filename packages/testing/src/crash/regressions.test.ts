import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError, parseManifest } from '@vlink/bag';

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
