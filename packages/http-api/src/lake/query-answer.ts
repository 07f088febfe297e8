import { Buffer } from 'node:buffer';
import { BagError } from '@vlink/bag';
import { HttpError } from '../http/errors.js';
import type { QueryableLake } from './lake-options.js';

export interface AnswerLimits {
  limit: number;
  timeoutMs: number;
  maxAnswerBytes: number;
  /** The client's request: aborted when it goes away. */
  signal: AbortSignal;
}

/**
 * One query's JSON answer within the server's limits. The bytes are counted by the lake while it makes the rows
 * (`maxBytes`), so an answer of a few huge rows stops at the first value past the limit (413 TOO_LARGE) instead of
 * being made whole, turned into one string and only then measured (which took the server's heap). The timeout is
 * this function's own, passed to the lake as an abort: the lake says LIMIT_REACHED for its byte limit, and a client
 * must be able to tell 413 from 503 TIMEOUT.
 */
export async function answerQuery(lake: QueryableLake, sql: string, limits: AnswerLimits): Promise<string> {
  const { limit, timeoutMs, maxAnswerBytes, signal } = limits;
  const started = performance.now();
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, timeoutMs);
  const cancel = () => stop.abort();
  signal.addEventListener('abort', cancel, { once: true });
  if (signal.aborted) stop.abort();
  let result: Awaited<ReturnType<QueryableLake['query']>>;
  try {
    result = await lake.query(sql, { limit, signal: stop.signal, maxBytes: maxAnswerBytes });
  } catch (error) {
    if (timedOut) throw new HttpError('TIMEOUT', `the query ran past its ${timeoutMs} ms timeout`);
    if (BagError.isInstance(error) && error.code === 'LIMIT_REACHED') throw new HttpError('TOO_LARGE', error.reason);
    throw error;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', cancel);
  }
  if (timedOut) throw new HttpError('TIMEOUT', `the query ran past its ${timeoutMs} ms timeout`);
  const text = JSON.stringify({ ...result, elapsedMs: Math.round(performance.now() - started) });
  // the rows are within the limit; their names, types and the rest of the answer may still pass it
  if (Buffer.byteLength(text) > maxAnswerBytes) {
    throw new HttpError(
      'TOO_LARGE',
      `the answer is over ${maxAnswerBytes} bytes of JSON (${result.rows.length} rows): ask fewer rows or columns`,
    );
  }
  return text;
}
