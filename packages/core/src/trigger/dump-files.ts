import { formatFileTime } from '../model/time-format.js';

/**
 * The file operations a dump needs, as a seam: the default uses `node:fs` (Node, Bun and Deno all provide it),
 * loaded on first use so importing core stays free of `node:*` modules.
 */
export interface DumpFiles {
  /** `{VLINK_TMP_DIR or the system temp dir}/vlink-trigger`. */
  defaultDir(): Promise<string>;
  exists(path: string): Promise<boolean>;
  ensureDir(dir: string): Promise<void>;
  /** Regular files in `dir` whose name ends with `extension` (with the dot), with their modification times. */
  list(dir: string, extension: string): Promise<Array<{ path: string; mtimeMs: number }>>;
  remove(path: string): Promise<void>;
}

export const nodeDumpFiles: DumpFiles = {
  async defaultDir() {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    const base = env?.['VLINK_TMP_DIR'] || (await import('node:os')).tmpdir();
    return joinPath(base, 'vlink-trigger');
  },
  async exists(path) {
    const fs = await import('node:fs/promises');
    return fs.stat(path).then(
      () => true,
      () => false,
    );
  },
  async ensureDir(dir) {
    const fs = await import('node:fs/promises');
    await fs.mkdir(dir, { recursive: true });
  },
  async list(dir, extension) {
    const fs = await import('node:fs/promises');
    const out: Array<{ path: string; mtimeMs: number }> = [];
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.toLowerCase().endsWith(extension)) continue;
      const path = joinPath(dir, entry.name);
      const stat = await fs.stat(path).catch(() => undefined);
      if (stat) out.push({ path, mtimeMs: stat.mtimeMs });
    }
    return out;
  },
  async remove(path) {
    const fs = await import('node:fs/promises');
    await fs.rm(path, { force: true });
    // A dump's summary sidecar (format reference §13) goes with it.
    await fs.rm(`${path}.json`, { force: true });
  },
};

export function joinPath(dir: string, name: string): string {
  return dir.length === 0 ? name : `${dir.replace(/[\\/]+$/, '')}/${name}`;
}

/**
 * An auto-named dump's path (format reference §9.2 step 2): `dir/<nameHint or local time>` with `/` and `\` replaced by `_`, plus
 * the extension; `base_1`, `base_2`, … when taken.
 */
export async function autoDumpPath(
  files: DumpFiles,
  dir: string,
  extension: string,
  nameHint: string | undefined,
  wallMs: number,
): Promise<string> {
  const base = joinPath(dir, (nameHint || formatFileTime(wallMs)).replace(/[\\/]/g, '_'));
  let path = `${base}${extension}`;
  for (let n = 1; await files.exists(path); n++) path = `${base}_${n}${extension}`;
  return path;
}

/**
 * Rotation before writing an auto-named dump (format reference §9.2 step 4.4): when `dir` holds `max` or more files of the
 * extension, deletes the oldest by modification time so that, with the new dump, `max` remain. Returns what it deleted.
 */
export async function rotateDumps(files: DumpFiles, dir: string, extension: string, max: number): Promise<string[]> {
  if (max <= 0) return [];
  const existing = (await files.list(dir, extension)).sort(
    (a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : 1),
  );
  if (existing.length < max) return [];
  const doomed = existing.slice(0, existing.length - max + 1).map((f) => f.path);
  for (const path of doomed) await files.remove(path);
  return doomed;
}
