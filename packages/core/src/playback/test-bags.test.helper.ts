import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerBackend } from '../backend/registry.js';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import type { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter } from '../writer/bag-writer.js';

/**
 * Test helpers for the replay engines (not exported from the package): small `.memjson` bags written in sync mode,
 * and an event log that records callbacks in the order they fire, so tests assert exact semantics by event order
 * rather than by wall time.
 */
export class TempBags {
  readonly dir = mkdtempSync(join(tmpdir(), 'vlink-replay-'));
  private n = 0;

  constructor() {
    registerBackend(memoryBackend);
  }

  path(name = 'bag'): string {
    return join(this.dir, `${name}-${this.n++}.memjson`);
  }

  /** Writes `[timestampUs, url]` rows (payload = row index) and returns the path. */
  async write(rows: ReadonlyArray<readonly [number, string]>, startTimestamp = 1_700_000_000_000): Promise<string> {
    const path = this.path();
    const writer = await BagWriter.create(path, { syncMode: true, startTimestamp });
    rows.forEach(([timestamp, url], i) => {
      writer.push(rawFrame(timestamp, url, i));
    });
    await writer.close();
    return path;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function rawFrame(timestamp: number, url: string, payload: number): Frame {
  return {
    timestamp,
    url,
    data: new Uint8Array([payload & 0xff, payload >> 8]),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
}

/** Records playback callbacks as strings: `ready`, `status:<n>`, `<url>@<ms>`, `finish:<bool>`. */
export function recordEvents(reader: BagReader): { events: string[]; finished: () => Promise<boolean> } {
  const events: string[] = [];
  let waiters: Array<(v: boolean) => void> = [];
  reader.registerReadyCallback(() => events.push('ready'));
  reader.registerStatusCallback((s) => events.push(`status:${s}`));
  reader.registerOutputCallback((f) => void events.push(`${f.url}@${f.timestamp / 1000}`));
  reader.registerFinishCallback((interrupted) => {
    events.push(`finish:${interrupted}`);
    const w = waiters;
    waiters = [];
    for (const resolve of w) resolve(interrupted);
  });
  return { events, finished: () => new Promise((resolve) => waiters.push(resolve)) };
}

/** Resolves after `ms` of wall time. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once `predicate()` holds, polling every few ms; rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error('condition not reached in time');
    await sleep(2);
  }
}
