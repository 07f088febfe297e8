/**
 * One error hierarchy for the whole project. Every error we throw is a `BagError` with a stable `code`, so callers
 * (the CLI, the HTTP layer, the Python client) can branch on the code instead of parsing messages.
 */
export type BagErrorCode =
  | 'UNSUPPORTED_FORMAT'
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'CORRUPT_FILE'
  | 'CORRUPT_DATA'
  | 'VERSION_MISMATCH'
  | 'CLOSED'
  | 'QUEUE_FULL'
  /** One-at-a-time work (a trigger dump) is already running. */
  | 'BUSY'
  | 'LIMIT_REACHED'
  | 'SCHEMA_CONFLICT'
  | 'DRIVER_MISSING'
  | 'IO_ERROR'
  | 'NOT_SUPPORTED'
  | 'ABORTED'
  /** SQL the lake's engine refused or failed on (bad syntax, an unknown column, a refused statement). */
  | 'QUERY_ERROR'
  | 'INTERNAL';

export interface BagErrorContext {
  file?: string;
  offset?: number;
  url?: string;
  cause?: unknown;
}

// A registered symbol (not a class identity check) so two installed copies of this package still recognise each
// other's errors; the same trick vercel/ai uses for its `isInstance`.
const MARKER = Symbol.for('vlink.bag.error');

export class BagError extends Error {
  readonly code: BagErrorCode;
  readonly file?: string;
  readonly offset?: number;
  readonly url?: string;
  /**
   * The message as written by our code: without the context suffix (`file`, `offset`, `url`) and without the text
   * of a wrapped driver or OS error (`wrap`). What a server may show a client that must see neither paths nor a
   * library's internals; `message` has everything.
   */
  readonly reason: string;
  /**
   * The message without the context suffix, but with a wrapped error's text: what a caller that shows `file`,
   * `offset` and `url` its own way (the CLI's `<file>: …` lines) prints, instead of cutting the suffix back out.
   */
  readonly detail: string;
  readonly [MARKER] = true;

  constructor(code: BagErrorCode, message: string, context: BagErrorContext = {}) {
    super(formatMessage(message, context), context.cause === undefined ? undefined : { cause: context.cause });
    this.name = 'BagError';
    this.code = code;
    this.reason = message;
    this.detail = message;
    if (context.file !== undefined) this.file = context.file;
    if (context.offset !== undefined) this.offset = context.offset;
    if (context.url !== undefined) this.url = context.url;
  }

  static isInstance(value: unknown): value is BagError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  /** Wraps anything thrown by a driver or the OS into a BagError, keeping an existing BagError as is. */
  static wrap(error: unknown, code: BagErrorCode, message: string, context: BagErrorContext = {}): BagError {
    if (BagError.isInstance(error)) return error;
    const detail = error instanceof Error ? error.message : String(error);
    const wrapped = new BagError(code, `${message}: ${detail}`, { ...context, cause: error });
    (wrapped as { reason: string }).reason = message;
    return wrapped;
  }
}

function formatMessage(message: string, context: BagErrorContext): string {
  const parts: string[] = [];
  if (context.file !== undefined) parts.push(`file ${context.file}`);
  if (context.offset !== undefined) parts.push(`offset ${context.offset}`);
  if (context.url !== undefined) parts.push(`url ${context.url}`);
  return parts.length === 0 ? message : `${message} (${parts.join(', ')})`;
}
