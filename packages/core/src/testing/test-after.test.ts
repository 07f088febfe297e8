import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { test } from '@vlink/fixtures/test';
import { runTestFile } from './test-file.test.helper.js';

const fixture = fixturePath('test', 'after-skip.fixture.test.js');

test("a file's top-level after() runs although one of its tests is skipped (cleanup of temporary folders)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-after-'));
  try {
    const mark = join(dir, 'mark');
    const run = runTestFile(fixture, { VLINK_AFTER_MARK: mark });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(existsSync(mark), 'the after hook ran');
    assert.equal(readFileSync(mark, 'utf8'), 'after ran\n', 'once');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
