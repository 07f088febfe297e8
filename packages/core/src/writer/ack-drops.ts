import { BagError } from '../errors.js';
import type { DropReason } from './writer-stats.js';

/**
 * Which error a drop the worker counted is reported with. An ack carries drop counts per (url, reason) and, apart,
 * a sample of the errors behind them (the worker does not send one per frame), so each count is paired with the
 * error of its kind: a storage drop with the fatal error, a schema conflict with the last conflict, any other drop
 * with the last other error; failing those, a generic error that still names the url and reason.
 */
export function dropErrorFor(
  reason: DropReason,
  url: string,
  errors: readonly BagError[],
  fatal: BagError | undefined,
  file: string,
): BagError {
  const error =
    reason === 'storageError'
      ? fatal
      : errors.findLast((e) => (e.code === 'SCHEMA_CONFLICT') === (reason === 'schemaConflict'));
  return error ?? new BagError('IO_ERROR', `frame dropped (${reason})`, { file, url });
}
