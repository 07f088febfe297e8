/**
 * The process flags a worker inherits. Node's `Worker` takes the parent's `execArgv` as they are, so a process
 * started as `node --input-type=module -` (or `-e`, `-p`, `--test`, `--watch`, `--inspect` …) would hand the worker
 * flags that make no sense for a module file and fail it ("--input-type can only be used with string input"). Only
 * flags about how modules are found and loaded, and a few harmless diagnostics, are passed on: `--import`/`--require`
 * hooks (a TypeScript loader the backend module may need), `--conditions`, `--experimental-*`, warnings, source maps,
 * and the CPU and heap profilers.
 * Per-process V8 flags (`--expose-gc`, `--stack-trace-limit`, `--harmony*`, `--max-old-space-size` …) are not passed:
 * Node refuses them in a Worker's `execArgv` (ERR_WORKER_INVALID_EXEC_ARGV) — V8 flags hold for every thread anyway.
 */
const KEEP_WITH_VALUE = new Set([
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
  '--conditions',
  '-C',
  '--disable-warning',
  '--unhandled-rejections',
  '--cpu-prof-dir',
  '--heap-prof-dir',
]);
const KEEP = new Set([
  '--no-warnings',
  '--no-deprecation',
  '--trace-warnings',
  '--trace-uncaught',
  '--enable-source-maps',
  '--preserve-symlinks',
  '--preserve-symlinks-main',
  // Profiling: each thread writes a profile of its own, so `node --cpu-prof` shows the writer worker too.
  '--cpu-prof',
  '--heap-prof',
]);

export function workerExecArgv(parent: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const arg = parent[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (KEEP_WITH_VALUE.has(name)) {
      if (name !== arg) out.push(arg);
      else if (i + 1 < parent.length) out.push(arg, parent[++i]!);
    } else if (KEEP.has(name) || /^--(no-)?experimental-[a-z0-9-]+$/.test(name)) {
      out.push(arg);
    }
  }
  return out;
}

/** The flags a worker started by this process should get (see `workerExecArgv`); none outside Node-like runtimes. */
export function inheritedExecArgv(): string[] {
  return workerExecArgv((globalThis as { process?: { execArgv?: string[] } }).process?.execArgv ?? []);
}
