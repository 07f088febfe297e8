import type { Backend } from './backend.js';

interface SniffFs {
  statSync(path: string): { isDirectory(): boolean; isFile(): boolean };
  existsSync(path: string): boolean;
  readdirSync(path: string): string[];
  openSync(path: string, flags: string): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  closeSync(fd: number): void;
}

let fsModule: Promise<SniffFs> | undefined;

/**
 * Which of `backends` recognises `path` by its content: for a directory, the first whose `directoryMarker` file it
 * contains, else the first with a file its `directoryFiles` names; for a file, the first whose `magic` its leading
 * bytes start with. Undefined when none does or the path cannot be read. Core stays free of static `node:*` imports:
 * `node:fs` (Node, Bun, Deno) is loaded on first use.
 */
export async function sniffPath(path: string, backends: readonly Backend[]): Promise<Backend | undefined> {
  const fs = await (fsModule ??= import('node:fs') as Promise<SniffFs>);
  let directory: boolean;
  try {
    const stat = fs.statSync(path);
    if (!stat.isDirectory() && !stat.isFile()) return undefined;
    directory = stat.isDirectory();
  } catch {
    return undefined;
  }
  if (directory) {
    const sep = path.endsWith('/') || path.endsWith('\\') ? '' : '/';
    const marked = backends.find((b) => b.directoryMarker && fs.existsSync(`${path}${sep}${b.directoryMarker}`));
    if (marked || !backends.some((b) => b.directoryFiles)) return marked;
    let names: string[];
    try {
      names = fs.readdirSync(path);
    } catch {
      return undefined;
    }
    return backends.find((b) => b.directoryFiles && names.some((name) => b.directoryFiles!.test(name)));
  }
  const longest = Math.max(0, ...backends.flatMap((b) => (b.magic ?? []).map((m) => m.length)));
  if (longest === 0) return undefined;
  const head = new Uint8Array(longest);
  let length = 0;
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r');
    while (length < longest) {
      const n = fs.readSync(fd, head, length, longest - length, length);
      if (n <= 0) break;
      length += n;
    }
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  return backends.find((b) => b.magic?.some((m) => m.length <= length && m.every((byte, i) => head[i] === byte)));
}
