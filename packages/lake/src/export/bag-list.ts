import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { BagError } from '@vlink/bag-core';
import { CATALOG_BAGS_FILE } from '../layout.js';
import type { BagFacts } from './bag-facts.js';
import { sqlString } from './duckdb.js';

/** A bag to export: its id in the lake, where it is read from, and what makes it this bag and no other. */
export interface BagRef {
  /** The catalog's `bag_id`; for a bag given by path, the path as given with `/` separators. */
  bagId: string;
  /** A local path or `s3://bucket/key`: what the reader opens. */
  location: string;
  /**
   * The bag's identity in the export: its real path (local) or its `s3://` url. Ids are not unique (two catalogs of
   * two vehicles both hold `run.vcap`), so part names and done markers go by this (paths.ts `bagHash`).
   */
  key: string;
  /**
   * Size, mtime and ETag the catalog recorded for an `s3://` bag, so a rerun over a catalog compares them with the
   * done marker without asking S3 again (local bags are looked at: a `stat` is cheap and never stale).
   */
  recorded?: BagFacts;
}

/** True for a folder holding a catalog (`bags.parquet`). */
export function isCatalogDir(path: string): boolean {
  return !/^s3:\/\//i.test(path) && existsSync(join(path, CATALOG_BAGS_FILE)) && statSync(path).isDirectory();
}

/** The identity of a bag location: its real path (any spelling of the same file is the same bag), or the url. */
export function bagKey(location: string): string {
  if (/^s3:\/\//i.test(location)) return location;
  const absolute = resolve(location);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute; // missing: the reader says so
  }
}

/**
 * The bags of the inputs: each catalog folder gives its rows (`bag_id`, `location` of `bags.parquet`, read with
 * DuckDB), each other input is a bag whose id is the path as given (`\` made `/`), so exporting the same files again
 * finds their done markers. A bag (a location) listed twice is exported once, under the id it is first listed with;
 * two different bags with the same id are two bags.
 */
export async function resolveBags(inputs: readonly string[], connection: DuckDBConnection): Promise<BagRef[]> {
  const bags: BagRef[] = [];
  const seen = new Set<string>();
  const add = (bag: BagRef) => {
    if (seen.has(bag.key)) return;
    seen.add(bag.key);
    bags.push(bag);
  };
  for (const input of inputs) {
    if (isCatalogDir(input)) {
      for (const bag of await catalogBags(join(input, CATALOG_BAGS_FILE), connection)) add(bag);
    } else {
      const bagId = /^s3:\/\//i.test(input) ? input : input.replaceAll('\\', '/');
      add({ bagId, location: input, key: bagKey(input) });
    }
  }
  return bags;
}

async function catalogBags(file: string, connection: DuckDBConnection): Promise<BagRef[]> {
  const source = `read_parquet(${sqlString(file)})`;
  const schema = await connection.runAndReadAll(`SELECT name FROM parquet_schema(${sqlString(file)})`);
  const columns = new Set(schema.getRows().map(([name]) => name));
  // A catalog written by `vlink-bag index` has them (layout.ts); a hand-made one may list bags only.
  const facts = ['size_bytes', 'modified', 'etag'].every((name) => columns.has(name))
    ? 'size_bytes::DOUBLE, epoch_us(modified)::DOUBLE, etag'
    : 'NULL, NULL, NULL';
  const result = await connection.runAndReadAll(`SELECT bag_id, location, ${facts} FROM ${source}`);
  return result.getRows().map(([bagId, location, size, modifiedUs, etag]) => {
    if (typeof bagId !== 'string' || typeof location !== 'string')
      throw new BagError('CORRUPT_DATA', 'catalog row without bag_id or location', { file });
    const bag: BagRef = { bagId, location, key: bagKey(location) };
    if (/^s3:\/\//i.test(location) && typeof size === 'number') {
      bag.recorded = {
        size,
        modifiedUs: typeof modifiedUs === 'number' ? modifiedUs : null,
        etag: typeof etag === 'string' ? etag : null,
      };
    }
    return bag;
  });
}
