import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '@vlink/fixtures';

// Test-only (the `*.test.*` name keeps it out of the published package).
//
// The MCAP conformance corpus, vendored in fixtures/mcap-conformance. Upstream keeps the .mcap files in Git LFS;
// `SHA256SUMS` there lists the LFS object ids of upstream's files, so checking each file against it proves that the
// bytes we test against are upstream's own.

export type JsonValue = string | string[] | Record<string, string>;
export interface JsonRecord {
  type: string;
  fields: Array<[string, JsonValue]>;
}
export interface CorpusFile {
  path: string;
  name: string;
  bytes: Uint8Array;
  records: JsonRecord[];
  features: string[];
}

export function loadCorpus(): CorpusFile[] {
  const root = join(fixturesDir, 'mcap-conformance');
  const expected = new Map(
    readFileSync(join(root, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => [line.slice(66), line.slice(0, 64)] as const),
  );
  const out: CorpusFile[] = [];
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(join(root, dir.name)).sort()) {
      if (!f.endsWith('.mcap')) continue;
      const path = join(root, dir.name, f);
      const bytes = new Uint8Array(readFileSync(path));
      const sha = createHash('sha256').update(bytes).digest('hex');
      const want = expected.get(`${dir.name}/${f}`);
      if (sha !== want) throw new Error(`${path}: sha256 ${sha} is not upstream's (${want ?? 'not listed'})`);
      const twin = JSON.parse(readFileSync(path.replace(/\.mcap$/, '.json'), 'utf8')) as {
        records: JsonRecord[];
        meta: { variant: { features: string[] } };
      };
      out.push({ path, name: f, bytes, records: twin.records, features: twin.meta.variant.features });
    }
  }
  if (out.length !== expected.size)
    throw new Error(`found ${out.length} .mcap files, SHA256SUMS lists ${expected.size}`);
  return out;
}
