/** Why a push did not reach the file. */
export type DropReason =
  | 'emptyUrl'
  /** Not a frame the types allow: data not a (live) Uint8Array, a time not a number, serType not a string, … */
  | 'invalidFrame'
  | 'closed'
  | 'queueDepth'
  | 'queueMemory'
  | 'schemaConflict'
  | 'limit'
  | 'storageError'
  /** A write plugin's `convertUrlMeta` dropped the url. */
  | 'plugin';

/** A snapshot of a writer's counters (`writer.stats()`). */
export interface WriterStats {
  /** Where frames are written: a worker, the same-thread queue (fallback) or the caller's stack (`syncMode`). */
  mode: 'worker' | 'queue' | 'sync';
  /** Accepted but not yet finished with by the writing side (in worker mode: not yet acknowledged by the worker). */
  queuedFrames: number;
  queuedBytes: number;
  /** Stored by the backend (in worker mode: as acknowledged by the worker). */
  writtenFrames: number;
  writtenBytes: number;
  dropped: Record<DropReason, number>;
  /** The same drops per url and cause (`url → cause → count`); what the file stores at close. */
  droppedByUrl: Record<string, Record<string, number>>;
  /** Durable commits asked of the backend (durable pushes, timer commits not included). */
  commits: number;
  currentFile: string;
  lastError: Error | undefined;
}

export function emptyDropCounters(): Record<DropReason, number> {
  return {
    emptyUrl: 0,
    invalidFrame: 0,
    closed: 0,
    queueDepth: 0,
    queueMemory: 0,
    schemaConflict: 0,
    limit: 0,
    storageError: 0,
    plugin: 0,
  };
}
