import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { recordingStart } from './recording-start.js';

describe('recordingStart: the time base of a split recording', () => {
  test("the first segment's start, as VLink takes it, while that segment is sound", () => {
    assert.equal(recordingStart(1_700_000_000_000, 1_700_000_000_000), 1_700_000_000_000);
    // Sound and disagreeing (the manifest is the damaged one): still the segment's.
    assert.equal(recordingStart(1_700_000_000_000, 1_700_000_000_001, true), 1_700_000_000_000);
  });

  test("the manifest's when the first segment knows none", () => {
    assert.equal(recordingStart(undefined, 1_700_000_000_000), 1_700_000_000_000);
    assert.equal(recordingStart(0, 1_700_000_000_000), 1_700_000_000_000);
  });

  test("the manifest's when the first segment is damaged and disagrees (fuzz .vcapx seed 84 #2295)", () => {
    assert.equal(recordingStart(1_700_000_000_001, 1_700_000_000_000, false), 1_700_000_000_000);
    // A damaged segment that agrees, or a manifest that knows none, changes nothing.
    assert.equal(recordingStart(1_700_000_000_000, 1_700_000_000_000, false), 1_700_000_000_000);
    assert.equal(recordingStart(1_700_000_000_001, 0, false), 1_700_000_000_001);
  });
});
