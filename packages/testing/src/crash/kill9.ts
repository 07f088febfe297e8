import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_THREADED_CHUNK_SIZE } from '@vlink/bag-mcap';
import { BagReader } from '@vlink/bag';
import { crashFrameSize, frameMismatch } from './payload.js';
import { childCommand, crashScript, repoRoot, type RuntimeName } from './runtime.js';

export type CrashFormat = '.vdb' | '.vcap' | '.vdbx' | '.vcapx';

export interface KillRunOptions {
  ext: CrashFormat;
  mode: 'sync' | 'worker';
  /** A directory of its own for this run's files (created; removed afterwards unless `keep`). */
  dir: string;
  /** How long the child records after `ready` before it is killed. */
  delayMs: number;
  /** `cacheSize`: the commit threshold (`.vdb`) / chunk size (`.vcap`), hence the most a crash may lose. */
  cacheSize: number;
  /** Every n-th frame is a `pushDurable` (0: none; losses are then bounded by `cacheSize` alone). */
  durableEvery: number;
  /** Split size of `.vdbx`/`.vcapx` recordings. */
  splitBySize: number;
  /** The writer's `compress` (default `none`). zstd `.vcap`/`.vcapx` chunks of ≥ 1 MiB engage the compressor thread in worker mode. */
  compress?: 'none' | 'zstd';
  runtime?: RuntimeName;
  keep?: boolean;
}

export interface KillRunResult {
  path: string;
  /** The last progress lines the child printed before it died (−1: none). */
  written: number;
  committed: number;
  splits: number;
  /** Frames read back after the crash (a prefix of what was pushed). */
  read: number;
  /** Payload bytes of the frames the child reported written but that did not survive. */
  lostBytes: number;
  /** The most `lostBytes` may be (see `allowedLoss`). */
  allowedLoss: number;
  /** Whether `fix()` then `check()` passed. */
  repaired: boolean;
  violations: string[];
  ms: { run: number; verify: number };
}

/**
 * What a kill may lose of the frames reported written: the commit window (plus one frame in flight); for split
 * recordings too: tryToFix reads the segment the manifest does not list yet (format reference §4.2), and a split closes the old
 * segment before the manifest names it. A `.vcap`/`.vcapx` with zstd chunks of ≥ 1 MiB (worker and sync mode) compresses
 * chunks on a thread of its own while the next one fills (`ThreadedCompressor`, two chunks deep), and one more chunk
 * compressed on the writer's thread meanwhile waits behind them (`DataSection`): those three may be lost as well.
 */
export function allowedLoss(options: Pick<KillRunOptions, 'ext' | 'mode' | 'cacheSize' | 'compress'>): number {
  const compressorThread =
    options.ext.startsWith('.vcap') && options.compress === 'zstd' && options.cacheSize >= MIN_THREADED_CHUNK_SIZE;
  return options.cacheSize * (compressorThread ? 4 : 1) + 2048;
}

/**
 * One kill -9 experiment: start `record-child` on a new bag, let it record for `delayMs`, SIGKILL it, then check the
 * crash guarantees (see the package README, "Crash safety") and that `fix()` makes the bag pass `check()`. Everything
 * that does not hold is listed in `violations`; an empty list is a pass.
 */
export async function killRun(options: KillRunOptions): Promise<KillRunResult> {
  const { ext, dir } = options;
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `crash${ext}`);
  const result: KillRunResult = {
    path,
    written: -1,
    committed: -1,
    splits: 0,
    read: 0,
    lostBytes: 0,
    allowedLoss: allowedLoss(options),
    repaired: false,
    violations: [],
    ms: { run: 0, verify: 0 },
  };
  const violation = (text: string) => result.violations.push(`${ext} ${options.mode}: ${text}`);
  const started = performance.now();

  const [bin, args] = childCommand(
    crashScript('record-child'),
    [
      path,
      options.mode,
      String(options.cacheSize),
      String(options.durableEvery),
      String(options.splitBySize),
      options.compress ?? 'none',
    ],
    options.runtime,
  );
  const child = spawn(bin, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let pending = '';
  let ready: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    pending += text;
    for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
      const line = pending.slice(0, at);
      pending = pending.slice(at + 1);
      const [tag, value] = line.split(' ');
      if (tag === 'ready') ready();
      else if (tag === 'W') result.written = Math.max(result.written, Number(value));
      else if (tag === 'C') result.committed = Math.max(result.committed, Number(value));
      else if (tag === 'S' && Number(value) > 0) result.splits++;
    }
  });
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 30_000)));
  const early = await Promise.race([readyPromise.then(() => false), closed.then(() => true), timeout]);
  clearTimeout(timer);
  if (early) {
    child.kill('SIGKILL');
    await closed;
    violation(`the child did not start recording: ${stderr.trim()}`);
    return result;
  }
  await sleep(options.delayMs);
  child.kill('SIGKILL');
  // Lines written before the kill are still in the pipe: read to the end.
  await closed;
  result.ms.run = performance.now() - started;
  if (child.signalCode !== 'SIGKILL')
    violation(`the child ended by itself before the kill (${child.exitCode}): ${stderr.trim()}`);

  const verifyStart = performance.now();
  try {
    await verify(result, violation);
  } finally {
    result.ms.verify = performance.now() - verifyStart;
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

async function verify(result: KillRunResult, violation: (text: string) => void): Promise<void> {
  const path = result.path;
  let reader: BagReader;
  try {
    reader = await BagReader.create(path, { tryToFix: true });
  } catch (error) {
    violation(`the bag does not open with tryToFix: ${String(error)}`);
    return;
  }
  try {
    reader.getInfo();
    reader.openCursor();
    for (let frame = reader.next(); frame; frame = reader.next()) {
      const wrong = frameMismatch(frame, result.read);
      if (wrong) {
        violation(`not a prefix of what was pushed: ${wrong}`);
        break;
      }
      result.read++;
    }
    if (reader.fail()) violation(`reading failed after ${result.read} frames: ${String(reader.getLastError())}`);
  } catch (error) {
    violation(`reading failed after ${result.read} frames: ${String(error)}`);
  } finally {
    reader.close();
  }
  for (let seq = result.read; seq <= result.written; seq++) result.lostBytes += crashFrameSize(seq);
  const allowed = result.allowedLoss;
  if (result.lostBytes > allowed) {
    violation(
      `lost ${result.lostBytes} payload bytes of frames reported written (frames ${result.read}..${result.written}), more than ${allowed}`,
    );
  }
  if (result.read <= result.committed)
    violation(`frame ${result.read} was reported committed (through ${result.committed}) but is gone`);

  // Repair, then the strict check must pass and nothing readable before may be lost. fix() may keep more than the
  // tolerant reader read: it salvages the complete messages of a chunk cut by the kill, which the reader skips whole.
  // Whatever it keeps must still be exactly a prefix of what was pushed.
  try {
    const fixer = await BagReader.create(path, { tryToFix: true, readOnly: false });
    try {
      if (!(await fixer.fix())) violation('fix() returned false');
      else if (!(await fixer.check())) violation('check() fails after fix()');
      else {
        let count = 0;
        fixer.openCursor();
        for (let frame = fixer.next(); frame; frame = fixer.next()) {
          const wrong = frameMismatch(frame, count);
          if (wrong) {
            violation(`after fix(), not a prefix of what was pushed: ${wrong}`);
            break;
          }
          count++;
        }
        if (count < result.read) violation(`after fix() ${count} frames, before ${result.read}`);
        else result.repaired = true;
      }
    } finally {
      fixer.close();
    }
  } catch (error) {
    violation(`fix/check failed: ${String(error)}`);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
