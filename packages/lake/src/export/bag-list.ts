import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { CATALOG_BAGS_FILE } from '../layout.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlString } from './duckdb.js';

/** A bag to export: its id in the lake and where it is read from. */
export interface BagRef {
  /** The catalog's `bag_id`; for a bag given by path, the path as given with `/` separators. */
  bagId: string;
  /** A local path or `s3://bucket/key`. */
  location: string;
}

/** True for a folder holding a catalog (`bags.parquet`). */
export function isCatalogDir(path: string): boolean {
  return !/^s3:\/\//i.test(path) && existsSync(join(path, CATALOG_BAGS_FILE)) && statSync(path).isDirectory();
}

/**
 * The bags of the inputs: each catalog folder gives its rows (`bag_id`, `location` of `bags.parquet`, read with
 * DuckDB), each other input is a bag whose id is the path as given (`\` made `/`), so exporting the same files again
 * finds their done markers. A bag listed twice is exported once.
 */
export async function resolveBags(inputs: readonly string[], connection: DuckDBConnection): Promise<BagRef[]> {
  const bags: BagRef[] = [];
  const seen = new Set<string>();
  const add = (bag: BagRef) => {
    if (seen.has(bag.bagId)) return;
    seen.add(bag.bagId);
    bags.push(bag);
  };
  for (const input of inputs) {
    if (isCatalogDir(input)) {
      const file = join(input, CATALOG_BAGS_FILE);
      const result = await connection.runAndReadAll(`SELECT bag_id, location FROM read_parquet(${sqlString(file)})`);
      for (const [bagId, location] of result.getRows()) {
        if (typeof bagId !== 'string' || typeof location !== 'string')
          throw new BagError('CORRUPT_DATA', 'catalog row without bag_id or location', { file });
        add({ bagId, location });
      }
    } else {
      add({ bagId: /^s3:\/\//i.test(input) ? input : input.replaceAll('\\', '/'), location: input });
    }
  }
  return bags;
}
