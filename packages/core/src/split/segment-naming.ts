import { formatFileTime } from '../model/time-format.js';

export interface SegmentNamingOptions {
  /** The manifest's name without extension: `drive.vdbx` → `drive`. */
  stem: string;
  /** Segment extension with the dot: `.vdb`, `.vcap`. */
  extension: string;
  /** `splitNameByTime`: local `YYYY-MM-DD_hh-mm-ss-mmm` names instead of `<stem>.<n>`. */
  byTime: boolean;
}

/**
 * Segment file names (format reference §4.3): `<stem>.<n><ext>` with n = split index + 1, or by time, where a name that repeats
 * the previous segment's millisecond or a name already used gets `.<n>` before the extension
 * (`2026-03-17_10-00-00-123.3.vdb`).
 */
export class SegmentNamer {
  private readonly used = new Set<string>();
  private previousMs: number | undefined;

  constructor(private readonly options: SegmentNamingOptions) {}

  /** The name of segment `index` (0 for the first), opened at `epochMs` (recording start + the trigger's elapsed ms). */
  name(index: number, epochMs: number): string {
    const { stem, extension, byTime } = this.options;
    let name: string;
    if (!byTime) name = `${stem}.${index + 1}${extension}`;
    else {
      const ms = Math.trunc(epochMs);
      const base = formatFileTime(ms);
      name = `${base}${extension}`;
      if (ms === this.previousMs || this.used.has(name)) name = `${base}.${index + 1}${extension}`;
      this.previousMs = ms;
    }
    this.used.add(name);
    return name;
  }
}
