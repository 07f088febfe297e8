/**
 * The synchronous file operations split recordings need (the manifest and whole segment files). Segment contents
 * go through each backend's own I/O; this seam only creates directories, rewrites the manifest and deletes files.
 * Core stays free of `node:*` imports: the default implementation loads `node:fs` (Node, Bun and Deno) on first use.
 */
export interface SplitFiles {
  exists(path: string): boolean;
  /** Size in bytes, −1 when the path is missing or not a regular file. */
  size(path: string): number;
  readText(path: string): string;
  /** Replaces the file's content atomically (a temporary file renamed over it), so a reader never sees half. */
  writeText(path: string, text: string): void;
  /** Deletes a file; a missing file is not an error. */
  remove(path: string): void;
  ensureDir(dir: string): void;
  /** The names of the regular files in a directory (`''`: the current one); `[]` when it cannot be listed. */
  list(dir: string): string[];
}

let nodeFiles: Promise<SplitFiles> | undefined;

/** The `node:fs` implementation, loaded once. */
export function nodeSplitFiles(): Promise<SplitFiles> {
  nodeFiles ??= import('node:fs').then(
    (fs): SplitFiles => ({
      exists: (path) => fs.existsSync(path),
      size(path) {
        try {
          const stat = fs.statSync(path);
          return stat.isFile() ? stat.size : -1;
        } catch {
          return -1;
        }
      },
      readText: (path) => fs.readFileSync(path, 'utf8'),
      writeText(path, text) {
        const temporary = `${path}.tmp`;
        fs.writeFileSync(temporary, text);
        try {
          fs.renameSync(temporary, path);
        } catch (error) {
          fs.rmSync(temporary, { force: true });
          throw error;
        }
      },
      remove: (path) => fs.rmSync(path, { force: true }),
      ensureDir(dir) {
        if (dir) fs.mkdirSync(dir, { recursive: true });
      },
      list(dir) {
        try {
          return fs
            .readdirSync(dir || '.', { withFileTypes: true })
            .filter((entry) => entry.isFile())
            .map((entry) => entry.name);
        } catch {
          return [];
        }
      },
    }),
    (error: unknown) => {
      nodeFiles = undefined;
      throw error;
    },
  );
  return nodeFiles;
}

/** `dir/` (with its separator) and the file name of a path; `''` as dir for a bare name. Both `/` and `\` count. */
export function splitPath(path: string): { dir: string; name: string } {
  const at = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return at < 0 ? { dir: '', name: path } : { dir: path.slice(0, at + 1), name: path.slice(at + 1) };
}

/** The manifest's directory as a path to create (`''` for the current directory). */
export function directoryOf(path: string): string {
  const { dir } = splitPath(path);
  return dir.length > 1 ? dir.slice(0, -1) : dir;
}

/** A manifest name without its extension: `drive.vdbx` → `drive`. */
export function stemOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/**
 * A segment entry VLink would resolve inside the manifest's directory: a plain file name, not `.`/`..`, without
 * `/`, `\`, `:` (a Windows drive) or NUL. Anything else is a path, which neither our reader nor our writer follows.
 */
export function isBareFileName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && name !== '.' && name !== '..' && !/[/\\:\0]/.test(name);
}
