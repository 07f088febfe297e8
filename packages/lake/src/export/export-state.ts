import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EXPORT_STATE_DIR } from './paths.js';

/** What a finished bag left in `<out>/_export/<hash>.done.json`: a rerun skips the bag when it is there. */
export interface DoneMarker {
  bag_id: string;
  location: string;
  messages: number;
  files: string[];
  exported_at: string;
}

/**
 * Resumability of one bag's export. Before a part file is written its final path goes into the bag's journal
 * (`<hash>.journal`); the part is written under a temporary name and renamed when complete; when every part is written
 * the done marker is written (renamed into place) and the journal removed. A bag with a journal but no marker was
 * interrupted: its parts (complete or not) are deleted and it is exported again from the start, so no row is ever
 * written twice.
 */
export class BagExportState {
  private readonly dir: string;
  private readonly journal: string;
  private readonly marker: string;

  constructor(outDir: string, hash: string) {
    this.dir = join(outDir, EXPORT_STATE_DIR);
    this.journal = join(this.dir, `${hash}.journal`);
    this.marker = join(this.dir, `${hash}.done.json`);
  }

  /** The marker of an earlier complete export of this bag id, if any. */
  done(bagId: string): DoneMarker | undefined {
    if (!existsSync(this.marker)) return undefined;
    const marker = JSON.parse(readFileSync(this.marker, 'utf8')) as DoneMarker;
    return marker.bag_id === bagId ? marker : undefined;
  }

  /** Deletes what an interrupted export of this bag left (the parts its journal lists); how many files went. */
  discardInterrupted(): number {
    if (!existsSync(this.journal)) return 0;
    let removed = 0;
    for (const path of readFileSync(this.journal, 'utf8').split('\n')) {
      if (!path) continue;
      for (const file of [path, temporaryName(path)]) {
        if (existsSync(file)) {
          rmSync(file, { force: true });
          removed++;
        }
      }
    }
    rmSync(this.journal, { force: true });
    return removed;
  }

  /** Records a part before it is written. */
  willWrite(path: string): void {
    mkdirSync(this.dir, { recursive: true });
    appendFileSync(this.journal, `${path}\n`);
  }

  finish(marker: DoneMarker): void {
    mkdirSync(this.dir, { recursive: true });
    const temporary = `${this.marker}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(marker)}\n`);
    renameSync(temporary, this.marker);
    rmSync(this.journal, { force: true });
  }
}

/** Where a part is written before the rename: hidden (`.`-prefixed), so no engine reads a half-written file. */
export function temporaryName(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp`);
}
