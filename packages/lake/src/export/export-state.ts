import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { BagError } from '@vlink/bag-core';
import type { BagFacts } from './bag-facts.js';
import { EXPORT_STATE_DIR } from './paths.js';

/** What a finished bag left in `<out>/_export/<hash>.done.json`: a rerun skips the bag while these still hold. */
export interface DoneMarker {
  bag_id: string;
  /** The bag's identity (bag-list.ts `BagRef.key`): its real path or `s3://` url. */
  location: string;
  /** The bag's facts when it was exported (bag-facts.ts); other facts now mean it changed since. */
  size: number;
  modified_us: number | null;
  etag: string | null;
  messages: number;
  /** Its part files, relative to the export folder, `/`-separated. */
  files: string[];
  exported_at: string;
}

/** The facts a marker recorded (none in a marker of an older version: it never matches). */
export function markerFacts(marker: DoneMarker): BagFacts | undefined {
  if (typeof marker.size !== 'number') return undefined;
  return { size: marker.size, modifiedUs: marker.modified_us ?? null, etag: marker.etag ?? null };
}

/**
 * Resumability of one bag's export. Before a part file is written its path and temporary name go into the bag's
 * journal (`<hash>.journal`), relative to the export folder, so a run from another working directory finds them; the
 * part is written under the temporary name (unique to the run) and renamed when complete; when every part is written
 * the done marker is written (renamed into place) and the journal removed. A bag with a journal but no marker was
 * interrupted: its parts (complete or not) are deleted and it is exported again from the start, so no row is ever
 * written twice. `outDir` must be absolute (the journal's names are resolved against it).
 */
export class BagExportState {
  private readonly dir: string;
  private readonly journal: string;
  private readonly marker: string;

  constructor(
    private readonly outDir: string,
    hash: string,
    /** Unique per run: temporary names never meet those of another run. */
    private readonly run: string,
  ) {
    this.dir = join(outDir, EXPORT_STATE_DIR);
    this.journal = join(this.dir, `${hash}.journal`);
    this.marker = join(this.dir, `${hash}.done.json`);
  }

  /** The marker of an earlier complete export of this bag, if any. */
  done(): DoneMarker | undefined {
    if (!existsSync(this.marker)) return undefined;
    try {
      return JSON.parse(readFileSync(this.marker, 'utf8')) as DoneMarker;
    } catch (error) {
      throw BagError.wrap(error, 'CORRUPT_FILE', 'the done marker cannot be read (delete the export folder)', {
        file: this.marker,
      });
    }
  }

  /**
   * Deletes what an earlier complete export of the bag wrote (the marker's parts, then the marker), before the bag,
   * which changed since, is exported again; how many files went. Interrupted in between, the marker still lists
   * them, and the next run deletes the rest.
   */
  discardExported(marker: DoneMarker): number {
    let removed = 0;
    for (const name of marker.files) if (this.remove(name)) removed++;
    rmSync(this.marker, { force: true });
    return removed;
  }

  /** Deletes what an interrupted export of this bag left (the parts its journal lists); how many files went. */
  discardInterrupted(): number {
    if (!existsSync(this.journal)) return 0;
    let removed = 0;
    for (const line of readFileSync(this.journal, 'utf8').split('\n')) {
      for (const name of line.split('\t')) if (name && this.remove(name)) removed++;
    }
    rmSync(this.journal, { force: true });
    return removed;
  }

  /** Deletes a file of the export given relative to its folder; never one outside it. */
  private remove(name: string): boolean {
    const file = isAbsolute(name) ? name : join(this.outDir, name);
    const inside = relative(this.outDir, file);
    if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return false;
    if (!existsSync(file)) return false;
    rmSync(file, { force: true });
    return true;
  }

  /** Records a part before it is written; returns the temporary name to write it under. */
  willWrite(path: string): string {
    const temporary = join(dirname(path), `.${basename(path)}.${this.run}.tmp`);
    mkdirSync(this.dir, { recursive: true });
    appendFileSync(this.journal, `${this.relative(path)}\t${this.relative(temporary)}\n`);
    return temporary;
  }

  /** A path of the export relative to its folder, `/`-separated (as markers and reports give part files). */
  relative(path: string): string {
    return relative(this.outDir, path).replaceAll('\\', '/');
  }

  finish(marker: DoneMarker): void {
    mkdirSync(this.dir, { recursive: true });
    const temporary = `${this.marker}.${this.run}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(marker)}\n`);
    renameSync(temporary, this.marker);
    rmSync(this.journal, { force: true });
  }
}
