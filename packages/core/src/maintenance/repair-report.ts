import type { ProgressCallback } from './check-report.js';
/** What a repair kept and lost of one url (one url + action for formats that key channels so). */
export interface UrlRepair {
  url: string;
  /** Formats that key channels by url + action (`.vcap`). */
  action?: string;
  recoveredFrames: number;
  /** Payload bytes recovered. */
  recoveredBytes: number;
  /**
   * Frames known to be lost: counted in damaged data, or missing against what the file's own bookkeeping said. A
   * file cut before its bookkeeping was written can lose frames nobody counted; `lostBytes` of the repair still says
   * how much of the file could not be used.
   */
  lostFrames: number;
  /** Payload bytes known to be lost (the same measures as `lostFrames`). */
  lostBytes: number;
}

/** What a backend salvaged from one file into its repaired copy (`Backend.salvage`). */
export interface SalvageResult {
  urls: UrlRepair[];
  /** Frames lost that no url can be named for (e.g. `.vdb` rows with mistyped columns); part of the repair's total. */
  unattributedLostFrames?: number;
  /** Bytes of the input that could not be used (damaged or cut records, garbage, unreadable pages). */
  lostBytes: number;
  /**
   * What of the input's bookkeeping the copy does not have, one line each (a url's name, kept under a placeholder; a
   * schema; a table of the format): frames can all be there and the repair still lose something a reader needs.
   */
  lostMetadata?: string[];
  /** What went wrong where, one line each (capped). */
  problems: string[];
  /**
   * Frames a reader of the damaged input returns with bytes the input does not have (a cut page read with zeros in
   * their place) or with columns the writer cannot have written (a `.vdb` row whose url is NULL, read as url 0): not
   * copied, and not counted as readable when the repair is weighed against a reader.
   */
  madeUpFrames?: number;
}

/** The outcome of `repairBag`. */
export interface RepairReport {
  /** The bag that was repaired. */
  path: string;
  /** Where the repaired bag is: `path` itself when it was replaced, else the `output` asked for. */
  output: string;
  /** The original, kept when `path` was replaced (unless `backup: false`). */
  backup: string | undefined;
  /** `path` now holds the repaired copy. */
  replaced: boolean;
  /** Frames a reader could read from the input before the repair (`tryToFix`, stopping at the first damage). */
  readableFrames: number;
  /** Frames in the repaired copy, which passed a full check before anything was replaced. */
  frames: number;
  /**
   * Of `readableFrames`, those a reader returns with made-up bytes (zeros where a cut took the real ones) or guessed
   * columns (a NULL url read as 0): left out of the copy. A repair never holds fewer than `readableFrames −
   * madeUpFrames`.
   */
  madeUpFrames: number;
  /** Payload bytes in the repaired copy. */
  bytes: number;
  /**
   * Frames known to be lost: those of `urls`, and those no url can be named for (the header counted more rows than
   * the urls account for, rows whose url id is unreadable).
   */
  lostFrames: number;
  lostBytes: number;
  /** What of the bag's bookkeeping the repaired copy does not have (url names, schemas), one line each. */
  lostMetadata: string[];
  /** Nothing was lost: no frame, no byte of data, nothing of `lostMetadata` (and, split, no segment). */
  lossless: boolean;
  urls: UrlRepair[];
  problems: string[];
  /** Split recordings: one report per segment, in recording order. */
  segments?: RepairReport[];
}

export interface RepairOptions {
  /** Write the repaired bag here and leave the input as it is. */
  output?: string;
  /** Keep the original as `<path>.bak` when replacing it (default true). */
  backup?: boolean;
  /**
   * Called as the salvage advances (`.vdb`: rows by rowid; `.vcap`: bytes of the source per chunk; split recordings:
   * segments, fractional within the one being repaired); `done` grows monotonically and ends equal to `total`.
   */
  onProgress?: ProgressCallback;
}

/** What `reindex()` may be told (VLink's `reindex()` takes nothing). */
export interface ReindexOptions {
  /**
   * Called as the reindex advances (`.vdb`: `steps`, one per index statement (drop, create, optimize); `.vcap`: bytes
   * of the source per chunk rewritten; split recordings: segments, fractional within the one being reindexed); `done`
   * grows monotonically and ends equal to `total`.
   */
  onProgress?: ProgressCallback;
}

/** What `Backend.salvage` may be told beyond its source and target. */
export interface SalvageOptions {
  onProgress?: ProgressCallback;
  /**
   * The file is a segment of a split recording whose manifest gives this start (ms since the epoch): a segment header
   * that lost or garbled its start takes it (every segment of a recording has its start).
   */
  recordingStart?: number;
}
