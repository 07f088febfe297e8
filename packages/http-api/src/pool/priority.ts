import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * How much lower than the server's own thread a bag worker runs (Linux nice steps). Under contention the kernel then
 * runs the thread that answers requests (`/v1/health`, other clients, the bytes of every stream) first, and the bulk
 * work (and a worker stuck spinning on a hostile bag until it is terminated) takes the rest. An idle machine runs the
 * workers at full speed all the same.
 */
export const WORKER_NICE = 5;

/**
 * Lowers the calling thread's priority by `by` steps: Linux applies `setpriority` to a single thread when given its
 * id, which `/proc/thread-self` names. Elsewhere (no /proc, or not allowed) the worker keeps the server's priority.
 */
export function lowerThreadPriority(by: number): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, Math.min(19, getPriority(tid) + by));
    return true;
  } catch {
    return false;
  }
}
