import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ActionType, BagReader, BagWriter, SchemaType, type Frame } from '@vlink/bag';
import { sampleFrames } from '@vlink/bag-core/testing';
import { loadDriver } from '@vlink/bag-sqlite';

/**
 * Bags an attacker would plant in a served folder, each built from a valid recording and then altered the way the
 * issue describes. Built with the runtime's own SQLite driver, so each runtime's suite attacks its own driver.
 */

async function write(
  path: string,
  frames: Frame[],
  options: Parameters<typeof BagWriter.create>[1] = {},
): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true, ...options });
  for (const frame of frames) writer.push({ ...frame });
  await writer.close();
}

/** Runs SQL on a `.vdb` through a read-write connection of this runtime's driver. */
async function alter(path: string, sql: string): Promise<void> {
  const driver = await loadDriver();
  const db = driver.open(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** `VLinkHeader` is a view over a recursive query that never yields a row: an endless `SELECT` on open. */
export async function recursiveViewVdb(path: string): Promise<void> {
  await write(path, sampleFrames(10));
  await alter(
    path,
    `ALTER TABLE VLinkHeader RENAME TO H0;
     CREATE VIEW VLinkHeader AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
       SELECT H0.* FROM H0, r WHERE r.n < 0;`,
  );
}

/** A trigger on the header: it would run on `tag`'s UPDATE. */
export async function triggerVdb(path: string): Promise<void> {
  await write(path, sampleFrames(10));
  await alter(path, 'CREATE TRIGGER evil AFTER UPDATE ON VLinkHeader BEGIN DELETE FROM VLinkDatas; END;');
}

/** A virtual table (the first module this SQLite build has); false when it has none of them. */
export async function virtualTableVdb(path: string): Promise<boolean> {
  await write(path, sampleFrames(10));
  for (const module of ['fts5(a)', 'fts4(a)', 'rtree(id, x0, x1)']) {
    try {
      await alter(path, `CREATE VIRTUAL TABLE extra USING ${module};`);
      return true;
    } catch {
      // module not compiled in: try the next
    }
  }
  return false;
}

/** `VLinkHeader.tag` becomes a generated column: computed on every read of the header. */
export async function generatedColumnVdb(path: string): Promise<void> {
  await write(path, sampleFrames(10));
  await alter(
    path,
    "ALTER TABLE VLinkHeader DROP COLUMN tag; ALTER TABLE VLinkHeader ADD COLUMN tag TEXT AS (printf('%.*c', 1000, 'x'));",
  );
}

/**
 * A split recording `<stem>.vdbx` whose second segment is a symbolic link to a file outside the root (the segment
 * moved there). Returns the outside file.
 */
export async function symlinkedSegmentVdbx(root: string, outside: string, stem: string): Promise<string> {
  await write(join(root, `${stem}.vdbx`), sampleFrames(120), { splitBySize: 4096 });
  const target = join(outside, `${stem}.2.vdb`);
  renameSync(join(root, `${stem}.2.vdb`), target);
  symlinkSync(target, join(root, `${stem}.2.vdb`));
  return target;
}

/** A split recording whose second segment was replaced by a FIFO; false where `mkfifo` is missing. */
export async function fifoSegmentVdbx(root: string, stem: string): Promise<boolean> {
  await write(join(root, `${stem}.vdbx`), sampleFrames(120), { splitBySize: 4096 });
  const segment = join(root, `${stem}.2.vdb`);
  renameSync(segment, `${segment}.orig`);
  return mkfifo(segment);
}

/** A valid `.vdb` with a FIFO as its rollback journal (SQLite opens `-journal` itself); false without `mkfifo`. */
export async function fifoJournalVdb(path: string): Promise<boolean> {
  await write(path, sampleFrames(10));
  return mkfifo(`${path}-journal`);
}

/** A valid `.vdb` whose `-journal` is a symbolic link to a file outside the root. */
export async function symlinkedJournalVdb(path: string, outsideFile: string): Promise<void> {
  await write(path, sampleFrames(10));
  writeFileSync(outsideFile, new Uint8Array(512));
  symlinkSync(outsideFile, `${path}-journal`);
}

export function mkfifo(path: string): boolean {
  const result = spawnSync('mkfifo', [path]);
  return result.status === 0;
}

/** One JSON payload nested `depth` arrays deep, then a normal one. */
export async function deepJsonBag(path: string, depth: number): Promise<void> {
  const json = (text: string, timestamp: number): Frame => ({
    timestamp,
    url: 'json/deep',
    data: new TextEncoder().encode(text),
    serType: 'json',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  });
  await write(path, [json(`${'['.repeat(depth)}${']'.repeat(depth)}`, 1_000), json('{"ok":true}', 2_000)]);
}

/**
 * A `.vcap` of many small chunks with bytes overwritten in the middle, at the first place where a reader gets some
 * frames and then fails (checked here with a reader on this thread): the "fails after the headers" case. Returns how
 * many frames read before the failure.
 */
export async function corruptMidwayVcap(path: string): Promise<number> {
  const frames: Frame[] = [];
  for (let i = 0; i < 400; i++)
    frames.push({
      timestamp: 1_000 + i * 1_000,
      url: `dds://u${i % 3}`,
      data: new Uint8Array(2048).fill(i & 0xff),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  const clean = path.replace(/\.vcap$/, '.clean.vcap');
  await write(clean, frames, { cacheSize: 16 * 1024 });
  const bytes = readFileSync(clean);
  for (let at = Math.floor(bytes.length * 0.4); at < bytes.length * 0.9; at += 997) {
    const broken = new Uint8Array(bytes);
    broken.fill(0xff, at, at + 16);
    writeFileSync(path, broken);
    const read = await framesBeforeFailure(path);
    if (read !== undefined && read > 0) return read;
  }
  copyFileSync(clean, path);
  throw new Error('no offset made the reader fail midway');
}

/** Frames read before the reader threw; undefined when it read to the end without an error. */
async function framesBeforeFailure(path: string): Promise<number | undefined> {
  let n = 0;
  let reader: BagReader | undefined;
  try {
    reader = await BagReader.create(path);
    for await (const _ of reader.frames()) n++;
    return undefined;
  } catch {
    return n;
  } finally {
    reader?.close();
  }
}
