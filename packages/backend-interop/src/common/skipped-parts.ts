import { BagError } from '@vlink/bag-core';

/** How many skipped parts a problem line names; a hostile file may hold thousands, the count says how many in all. */
const NAMED = 5;

/**
 * Parts of a damaged file a `tryToFix` read skipped (chunks, sections, metadata records), counted, the first few
 * named with why and where: the one shape of the `<format>.problems` line that tells the user what was left out.
 */
export class SkippedParts {
  count = 0;
  private readonly named: string[] = [];

  /** `what` says what was skipped and why, as a plural noun phrase: "chunk(s) that do not read". */
  constructor(private readonly what: string) {}

  /** Counts the part at offset `at` whose read threw `error`; anything but a `BagError` is a bug and goes on up. */
  add(error: unknown, at: number): void {
    if (!BagError.isInstance(error)) throw error;
    if (this.count++ < NAMED) this.named.push(`${error.detail} (offset ${at})`);
  }

  /** The problem line, `aside` (what the parts held, as far as known) in brackets after the count; undefined when none. */
  line(aside?: string): string | undefined {
    if (this.count === 0) return undefined;
    const more = this.count > this.named.length ? '; …' : '';
    const held = aside === undefined ? '' : ` (${aside})`;
    return `${this.count} ${this.what} skipped${held}: ${this.named.join('; ')}${more}`;
  }
}
