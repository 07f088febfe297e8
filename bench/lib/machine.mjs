// The machine and the runtimes a run used, for the header of BENCHMARKS.md.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PYTHON = join(REPO, 'clients', 'python', '.venv', 'bin', 'python');

/** How to start a script under each runtime; `missing` says why a runtime cannot be used. */
export function runtimeCommand(runtime) {
  const bin = (name) => join(REPO, 'node_modules', '.bin', name);
  switch (runtime) {
    case 'node':
      return { exe: process.execPath, args: [] };
    case 'bun':
      return existsSync(bin('bun'))
        ? { exe: bin('bun'), args: [] }
        : { missing: 'node_modules/.bin/bun not found (npm install)' };
    case 'deno':
      return existsSync(bin('deno'))
        ? { exe: bin('deno'), args: ['run', '-A', '--node-modules-dir=manual'] }
        : { missing: 'node_modules/.bin/deno not found (npm install)' };
    default:
      throw new Error(`unknown runtime ${runtime}`);
  }
}

function version(exe, args, pattern) {
  if (!exe || (exe.includes('/') && !existsSync(exe))) return undefined;
  const out = spawnSync(exe, args, { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  return pattern.exec(`${out.stdout}${out.stderr}`)?.[1];
}

export function runtimeVersions() {
  return {
    node: process.versions.node,
    bun: version(runtimeCommand('bun').exe, ['--version'], /(\d+\.\d+\.\d+\S*)/),
    deno: version(runtimeCommand('deno').exe, ['--version'], /deno (\d+\.\d+\.\d+\S*)/),
    python: version(PYTHON, ['--version'], /Python (\S+)/),
  };
}

export function machineInfo() {
  const list = cpus();
  return {
    cpu: list[0]?.model?.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}
