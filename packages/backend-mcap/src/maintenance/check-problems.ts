import { BagError } from '@vlink/bag-core';

/** Adds one problem to a check's list, with the byte offset it is at when one is known. */
export type ReportProblem = (text: string, offset?: number) => void;

/** The text of what was thrown, for a problem line. */
export function errorMessage(error: unknown): string {
  return BagError.isInstance(error) || error instanceof Error ? error.message : String(error);
}
