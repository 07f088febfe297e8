/**
 * What a full `check` found, format-neutral: each problem with where it is (the file, and what the format can say: a
 * byte offset, a row, a url, a time), so a user can tell a damaged chunk from stale bookkeeping. Backends fill it
 * (`BackendReader.verify`); `BagReader.verify()` returns it and the CLI prints it (`check --json`).
 */
export interface CheckProblem {
  /** The file the problem is in (a segment for split recordings, the manifest for its bookkeeping). */
  file: string;
  message: string;
  /** Byte offset in the file (`.vcap`: the chunk or record). */
  offset?: number;
  /** `.vdb`: the row (`rowid`) of `VLinkDatas`. */
  row?: number;
  url?: string;
  /** µs since the recording start. */
  timeUs?: number;
}

export interface CheckReport {
  ok: boolean;
  path: string;
  /** True for the metadata-only check (`quick`): payloads were not decoded. */
  quick: boolean;
  /** Frames read and decoded (full check), or the count the metadata gives (quick). */
  frames: number;
  /** The first problems found (at most `MAX_CHECK_PROBLEMS`), in file order where the format has one. */
  problems: CheckProblem[];
  /** How many more problems there were beyond those listed. */
  moreProblems: number;
}

export interface CheckOptions {
  /** Metadata and structure only (today's VLink `check()`), without decoding every payload. */
  quick?: boolean;
  /**
   * Called as the full check advances (not for `quick`): `done` grows monotonically and ends equal to `total`. Called
   * synchronously from the check's loop, so keep it cheap (a progress bar's update).
   */
  onProgress?: ProgressCallback;
}

/**
 * How far a maintenance run is: `done` of `total` in `unit` (`.vdb`: rows of `VLinkDatas`, or for a reindex the
 * index statements run; `.vcap`: bytes of the data section; split recordings: segments, `done` fractional within the
 * segment being worked on; formats without a check of their own: frames read).
 */
export interface MaintenanceProgress {
  done: number;
  total: number;
  unit: 'rows' | 'bytes' | 'segments' | 'steps' | 'frames';
}

export type ProgressCallback = (progress: MaintenanceProgress) => void;

export const MAX_CHECK_PROBLEMS = 100;

/** Collects problems up to the cap and counts the rest. */
export class ProblemList {
  readonly problems: CheckProblem[] = [];
  more = 0;

  constructor(readonly file: string) {}

  add(message: string, where: Omit<CheckProblem, 'message' | 'file'> & { file?: string } = {}): void {
    if (this.problems.length >= MAX_CHECK_PROBLEMS) {
      this.more++;
      return;
    }
    const { file, ...rest } = where;
    this.problems.push({ file: file ?? this.file, message, ...rest });
  }

  get count(): number {
    return this.problems.length + this.more;
  }

  report(path: string, quick: boolean, frames: number): CheckReport {
    return { ok: this.count === 0, path, quick, frames, problems: this.problems, moreProblems: this.more };
  }
}

/** One line of text per problem: `file[: offset N][: row N][: url U][: at T s]: message`. */
export function formatCheckProblem(p: CheckProblem): string {
  const parts = [p.file];
  if (p.offset !== undefined) parts.push(`offset ${p.offset}`);
  if (p.row !== undefined) parts.push(`row ${p.row}`);
  if (p.url !== undefined) parts.push(`url ${p.url}`);
  if (p.timeUs !== undefined) parts.push(`at ${(p.timeUs / 1e6).toFixed(6)} s`);
  return `${parts.join(': ')}: ${p.message}`;
}
