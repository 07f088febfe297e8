/**
 * The split callbacks of a writer (format reference §4.3) and the segment being written. In worker mode the worker
 * splits and these follow its notifications, so they may trail it by a moment.
 */
export class SplitNotifications {
  /** The segment being written (0 for the first; always 0 when not split). */
  index = 0;
  private readonly before: Array<(index: number, file: string) => void> = [];
  private readonly after: Array<(index: number, file: string) => void> = [];

  register(callback: (index: number, file: string) => void, before: boolean): void {
    (before ? this.before : this.after).push(callback);
  }

  notify(index: number, file: string, before: boolean): void {
    this.index = index;
    for (const callback of before ? this.before : this.after) callback(index, file);
  }
}
