import { BagError } from '@vlink/bag-core';

/** Adds one line to a check's problem list (the list keeps the first 100; see `checkVcapReadable`). */
export type ReportProblem = (text: string) => void;

/** The text of what was thrown, for a problem line. */
export function errorMessage(error: unknown): string {
  return BagError.isInstance(error) || error instanceof Error ? error.message : String(error);
}
