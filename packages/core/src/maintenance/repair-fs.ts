import { splitPath } from '../split/split-files.js';

/** The file operations a repair needs; `node:fs` (Node, Bun, Deno), loaded on first use so core stays importable. */
export interface RepairFs {
  exists(path: string): boolean;
  /** A free path in `destination`'s directory for the copy being built, ending in `ext` (so it opens as that format). */
  siblingTemp(destination: string, ext: string): string;
  fsyncFile(path: string): void;
  /** Makes a rename in the directory holding `path` durable. */
  fsyncDir(path: string): void;
  rename(from: string, to: string): void;
  /** A hard link (a copy where links are not possible). */
  linkOrCopy(from: string, to: string): void;
  remove(path: string): void;
  readText(path: string): string;
  writeText(path: string, text: string): void;
  list(dir: string): string[];
}

let loaded: Promise<RepairFs> | undefined;

export function repairFs(): Promise<RepairFs> {
  loaded ??= import('node:fs').then((fs): RepairFs => {
    const fsync = (path: string, flags: string) => {
      let fd: number | undefined;
      try {
        fd = fs.openSync(path, flags);
        fs.fsyncSync(fd);
      } catch {
        // directories cannot be opened everywhere (Windows): only durability is lost there
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    };
    return {
      exists: (path) => fs.existsSync(path),
      siblingTemp(destination, ext) {
        const { dir, name } = splitPath(destination);
        return `${dir}.${name}.repair-${globalThis.crypto.randomUUID().slice(0, 8)}${ext}`;
      },
      fsyncFile: (path) => {
        const fd = fs.openSync(path, 'r+');
        try {
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      },
      fsyncDir: (path) => fsync(splitPath(path).dir || '.', 'r'),
      rename: (from, to) => fs.renameSync(from, to),
      linkOrCopy(from, to) {
        try {
          fs.linkSync(from, to);
        } catch {
          fs.copyFileSync(from, to);
        }
      },
      remove(path) {
        // A backend may leave journal files next to a SQLite copy it built.
        for (const p of [path, `${path}-journal`, `${path}-wal`, `${path}-shm`]) fs.rmSync(p, { force: true });
      },
      readText: (path) => fs.readFileSync(path, 'utf8'),
      writeText(path, text) {
        const fd = fs.openSync(path, 'w');
        try {
          fs.writeSync(fd, text);
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      },
      list(dir) {
        try {
          return fs.readdirSync(dir || '.');
        } catch {
          return [];
        }
      },
    };
  });
  return loaded;
}

/**
 * Puts `replacement` (complete and fsynced) at `path`: the original is first hard-linked to a free `<path>.bak`
 * name (`.bak.1`, … when taken) when `backup`, then the replacement is renamed over `path` in one step, and the
 * directory is synced. At every moment `path` holds either the original or the whole replacement. Returns the backup.
 */
export function replaceFile(fs: RepairFs, path: string, replacement: string, backup: boolean): string | undefined {
  let saved: string | undefined;
  if (backup) {
    saved = `${path}.bak`;
    for (let i = 1; fs.exists(saved); i++) saved = `${path}.bak.${i}`;
    fs.linkOrCopy(path, saved);
  }
  fs.rename(replacement, path);
  fs.fsyncDir(path);
  return saved;
}
