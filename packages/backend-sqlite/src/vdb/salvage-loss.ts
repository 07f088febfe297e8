import type { UrlRepair } from '@vlink/bag-core';
import type { SalvageUrls } from './salvage-urls.js';

// What a .vdb salvage lost, measured against the file's own bookkeeping. Apart from salvage.ts, which copies the rows.

export interface KeptRows {
  /** Rows copied. */
  rows: number;
  /** Rows dropped that no url can be named for (mistyped columns). */
  unattributed: number;
  /** The header's `count` (its last metadata refresh). */
  saidTotal: number;
}

export interface SalvageLoss {
  urls: UrlRepair[];
  unattributedLostFrames: number;
}

/**
 * Lost: per url, what its `VLinkUrls` row said beyond what was kept, and at least its rows dropped (a payload that
 * does not decode, bytes the cut took). Then the header: the writer refreshes its count in the same transaction as the
 * rows it counts, so the file held at least that many rows, and whatever of them was not kept is lost even when the
 * urls cannot say whose (their rows cut off, or each refreshed less often than the header: a url's count is refreshed
 * only with its own frames). A file that had one url only (VLinkUrls read whole and intact) loses them from that url.
 */
export function measureLoss(urls: SalvageUrls, kept: KeptRows, problem: (line: string) => void): SalvageLoss {
  const rows = [...urls.byId.values()];
  const result: UrlRepair[] = rows.map((u) => ({
    url: u.url,
    recoveredFrames: u.count,
    recoveredBytes: u.size,
    lostFrames: Math.max(u.dropped, u.saidCount - u.count),
    lostBytes: Math.max(u.droppedBytes, u.saidSize - u.size),
  }));
  // A dropped row no url can be named for is, most likely, one of the rows a url's bookkeeping counts beyond what
  // was kept; only what those shortfalls do not explain is lost on top.
  const shortfall = rows.reduce((n, u) => n + Math.max(0, u.saidCount - u.count - u.dropped), 0);
  let unattributed = Math.max(0, kept.unattributed - shortfall);
  const counted = unattributed + result.reduce((n, u) => n + u.lostFrames, 0);
  const beyond = kept.saidTotal - kept.rows - counted;
  if (beyond > 0) {
    const only = urls.complete && rows.length === 1 && !rows[0]!.placeholder ? result[0] : undefined;
    if (only) only.lostFrames += beyond;
    else unattributed += beyond;
    problem(
      `the header counted ${kept.saidTotal} rows; ${kept.rows} could be kept: ${kept.saidTotal - kept.rows} lost` +
        (only
          ? ` (all of url ${only.url}, the file's only url)`
          : beyond < kept.saidTotal - kept.rows
            ? `, ${beyond} of them no url can be named for`
            : ', no url can be named for them'),
    );
  }
  return { urls: result, unattributedLostFrames: unattributed };
}
