import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { loadCodecs, FileWritable, VcapFileWriter } from '@vlink/bag-mcap';
import { loadDriver, VdbFileWriter, VdbRecording, type SqliteDriver } from '@vlink/bag-sqlite';
import {
  BagError,
  BagReader,
  BagWriter,
  registerBackend,
  registeredExtensions,
  type Backend,
  type BackendWriter,
} from '@vlink/bag';
import { crashFrame, frameMismatch } from './payload.js';
import { currentRuntime } from './runtime.js';

// Writing into a disk that fills up: the error surfaces through fail() and the error callback, everything committed
// before it stays readable, and the writer stops writing (no retry loop, bounded CPU). Two ways to fill a disk:
// injected (always runs) and a real 2 MiB tmpfs (needs root and mount; skipped with a message otherwise).

const dir = mkdtempSync(join(tmpdir(), 'vlink-full-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 * 1024;

// --- injected: the Writable seam (.vcap) and SQLite's own "database or disk is full" (.vdb) ------------------------

/**
 * A `.vcap` file whose disk holds `budget` bytes: writes past it fail the way `FileWritable` reports ENOSPC. This is
 * the whole seam: `VcapFileWriter` takes any `Writable`, so the test backend below hands it this one.
 */
class FullDiskWritable extends FileWritable {
  writes = 0;
  constructor(
    path: string,
    private readonly budget: number,
  ) {
    super(path);
  }
  override write(bytes: Uint8Array): void {
    this.charge(bytes.length);
    super.write(bytes);
  }
  override writev(chunks: readonly Uint8Array[]): void {
    this.charge(chunks.reduce((n, c) => n + c.length, 0));
    super.writev(chunks);
  }
  private charge(n: number): void {
    this.writes++;
    if (this.position() + n > this.budget) {
      const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'write',
      });
      throw BagError.wrap(enospc, 'IO_ERROR', 'write failed', { file: this.path, offset: this.position() });
    }
  }
}

/** Counts what reaches the backend, so "stops writing after the error" can be checked. */
interface Counted {
  writes: number;
}

function countingBackend(
  name: string,
  ext: string,
  open: (
    path: string,
    config: Parameters<Backend['createWriter']>[1],
    context: Parameters<Backend['createWriter']>[2],
  ) => Promise<BackendWriter>,
  counter: Counted,
): Backend {
  return {
    name,
    extensions: [ext],
    async createWriter(path, config, context) {
      const inner = await open(path, config, context);
      return {
        write: (frame, urlId) => {
          counter.writes++;
          inner.write(frame, urlId);
        },
        writeSchema: (schema) => inner.writeSchema(schema),
        setUrlLoss: (url, loss) => inner.setUrlLoss(url, loss),
        commit: () => inner.commit(),
        tick: () => inner.tick(),
        currentFile: () => inner.currentFile(),
        close: () => inner.close(),
      };
    },
    async openReader() {
      throw new BagError('NOT_SUPPORTED', 'write-only test backend');
    },
  };
}

const vcapCount: Counted = { writes: 0 };
registerBackend(
  countingBackend(
    'full-vcap',
    '.fullvcap',
    async (path, config, context) => {
      const writable = new FullDiskWritable(path, 256 * 1024);
      const writer = new VcapFileWriter({ writable, codecs: await loadCodecs(), config, context, file: path });
      return {
        write: (f, urlId) => writer.write(f, urlId),
        writeSchema: (s) => writer.writeSchema(s),
        setUrlLoss: (u, l) => writer.setUrlLoss(u, l),
        commit: () => writer.commit(),
        tick: () => writer.tick(),
        currentFile: () => path,
        close: () => writer.close(),
      };
    },
    vcapCount,
  ),
);

/** SQLite with `max_page_count`: past it every write fails with SQLITE_FULL, the error a full disk gives. */
function fullDriver(base: SqliteDriver, pages: number): SqliteDriver {
  return {
    name: base.name,
    open(path, options) {
      const db = base.open(path, options);
      db.exec(`PRAGMA max_page_count = ${pages};`);
      return db;
    },
  };
}
const vdbCount: Counted = { writes: 0 };
const driver = await loadDriver();
registerBackend(
  countingBackend(
    'full-vdb',
    '.fullvdb',
    async (path, config, context) =>
      VdbFileWriter.open(fullDriver(driver, 24), path, config, context, new VdbRecording(config)),
    vdbCount,
  ),
);

interface Outcome {
  committed: number;
  pushed: number;
  errors: BagError[];
  writesAtFailure: number;
  writesAfter: number;
  cpuIdleMs: number;
  closeMs: number;
}

/**
 * Pushes `crashFrame(0), (1), …` (a durable push every 16 frames) until the writer fails, then keeps pushing for a
 * while, idles, and closes. Records what was committed and what reached the backend.
 */
async function fillUp(
  path: string,
  options: { syncMode: boolean; worker?: boolean; counter?: Counted; cacheSize?: number; compress?: 'zstd' },
): Promise<Outcome> {
  const writer = await BagWriter.create(path, {
    syncMode: options.syncMode,
    worker: options.worker ?? false,
    cacheSize: options.cacheSize ?? 32 * 1024,
    splitBySize: 256 * 1024,
    ...(options.compress ? { compress: options.compress } : {}),
  });
  const errors: BagError[] = [];
  writer.registerErrorCallback((error) => errors.push(error));
  let committed = -1;
  let seq = 0;
  const deadline = performance.now() + 20_000;
  while (!writer.fail() && seq < 200_000 && performance.now() < deadline) {
    const frame = crashFrame(seq);
    if ((seq + 1) % 16 === 0) {
      const s = seq;
      const durable = writer.pushDurable(frame).then(
        () => void (committed = Math.max(committed, s)),
        () => undefined,
      );
      if (options.syncMode) await durable;
    } else writer.push(frame);
    seq++;
    if (!options.syncMode && seq % 64 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  // Let in-flight acks settle, then check that nothing more reaches the backend.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const writesAtFailure = options.counter?.writes ?? 0;
  let refused = 0;
  for (let i = 0; i < 2000; i++) if (writer.push(crashFrame(seq + i)) < 0) refused++;
  assert.equal(refused, 2000, 'a failed writer refuses frames');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const writesAfter = options.counter?.writes ?? 0;
  // No retry loop: the process stays (nearly) idle after the failure. The least of up to three 250 ms windows: a loop
  // spins in every one, a one-off burst (a collection, a thread's exit) lands in one (Deno, the compressor thread's
  // case: 113 ms in one run, well under 100 in the reruns).
  let cpuIdleMs = Number.POSITIVE_INFINITY;
  for (let window = 0; window < 3 && cpuIdleMs >= 100; window++) {
    const cpu = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 250));
    const used = process.cpuUsage(cpu);
    cpuIdleMs = Math.min(cpuIdleMs, (used.user + used.system) / 1000);
  }
  const closeStart = performance.now();
  await writer.close();
  return {
    committed,
    pushed: seq,
    errors,
    writesAtFailure,
    writesAfter,
    cpuIdleMs,
    closeMs: performance.now() - closeStart,
  };
}

/** Every frame read back is the pushed one, in order, and at least everything committed is there. */
async function readBack(path: string, committed: number): Promise<number> {
  const reader = await BagReader.create(path, { tryToFix: true });
  let n = 0;
  try {
    reader.openCursor();
    for (let frame = reader.next(); frame; frame = reader.next()) {
      assert.equal(frameMismatch(frame, n), undefined);
      n++;
    }
    assert.equal(reader.fail(), false, String(reader.getLastError()));
  } finally {
    reader.close();
  }
  assert.ok(n > committed, `read ${n} frames, committed through ${committed}`);
  return n;
}

function assertFailedCleanly(o: Outcome, what: string, pattern: RegExp): void {
  assert.ok(o.errors.length >= 1, `${what}: the error callback ran`);
  assert.ok(BagError.isInstance(o.errors[0]), `${what}: a BagError`);
  assert.match(`${o.errors[0]!.message} ${String((o.errors[0] as Error).cause ?? '')}`, pattern, what);
  assert.equal(o.writesAfter, o.writesAtFailure, `${what}: nothing reaches the backend after the failure`);
  assert.ok(o.cpuIdleMs < 100, `${what}: ${o.cpuIdleMs.toFixed(0)} ms of CPU in 250 ms idle after the failure`);
  assert.ok(o.closeMs < 5000, `${what}: close took ${o.closeMs.toFixed(0)} ms`);
  assert.ok(o.committed >= 0, `${what}: something was committed before the disk filled`);
}

describe(`disk full (${currentRuntime()})`, () => {
  for (const syncMode of [true, false]) {
    const mode = syncMode ? 'sync' : 'queue';
    test(`injected ENOSPC under a .vcap (${mode} mode): fail(), callback, committed frames readable, no spin`, async () => {
      const path = join(dir, `inj-${mode}.fullvcap`);
      const o = await fillUp(path, { syncMode, counter: vcapCount });
      assertFailedCleanly(o, '.vcap', /ENOSPC|no space/);
      const copy = join(dir, `inj-${mode}.vcap`);
      copyFileSync(path, copy);
      await readBack(copy, o.committed);
    });

    test(`SQLite "database or disk is full" under a .vdb (${mode} mode): same guarantees`, async () => {
      const path = join(dir, `inj-${mode}.fullvdb`);
      const o = await fillUp(path, { syncMode, counter: vdbCount });
      assertFailedCleanly(o, '.vdb', /full/i);
      const copy = join(dir, `inj-${mode}.vdb`);
      copyFileSync(path, copy);
      await readBack(copy, o.committed);
    });
  }

  // --- a real full disk: a 2 MiB tmpfs -------------------------------------------------------------------------------
  const mountPoint = join(dir, 'tmpfs');
  mkdirSync(mountPoint, { recursive: true });
  const mounted =
    process.platform === 'linux' &&
    spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'ignore' }).status === 0;
  if (mounted) after(() => void spawnSync('umount', ['-l', mountPoint], { stdio: 'ignore' }));
  const skip = mounted
    ? false
    : 'mounting a 2 MiB tmpfs is not permitted here (needs root and mount); the injected cases above still ran';
  const formats = ['.vdb', '.vcap', '.vdbx', '.vcapx'].filter((ext) => registeredExtensions().includes(ext));
  for (const ext of formats) {
    // Worker mode for the single-file formats (the split layer runs the same segment writers in either mode).
    for (const worker of ext.endsWith('x') ? [false] : [false, true]) {
      test(`${ext} on a full 2 MiB tmpfs (${worker ? 'worker' : 'sync'} mode)`, { skip }, async () => {
        const sub = join(mountPoint, `${ext.slice(1)}-${worker ? 'w' : 's'}`);
        mkdirSync(sub, { recursive: true });
        try {
          const path = join(sub, `full${ext}`);
          const o = await fillUp(path, { syncMode: !worker, worker });
          assertFailedCleanly(o, `${ext} tmpfs`, /ENOSPC|no space|full/i);
          await readBack(path, ext.endsWith('x') ? -1 : o.committed);
        } finally {
          rmSync(sub, { recursive: true, force: true });
        }
      });
    }
  }

  // With zstd chunks of 1 MiB or more, a .vcap compresses on a thread of its own (ThreadedCompressor), in worker and
  // in sync mode, and writes each chunk once later ones are full: ENOSPC must surface the same way, the chunks in
  // compression dropped.
  for (const mode of ['worker', 'sync'] as const) {
    test(`.vcap on a full 2 MiB tmpfs, ${mode} mode with the compressor thread (zstd, cacheSize 1 MiB)`, {
      skip: skip || !formats.includes('.vcap'),
    }, async () => {
      const sub = join(mountPoint, `vcap-compressor-${mode}`);
      mkdirSync(sub, { recursive: true });
      try {
        const path = join(sub, 'full.vcap');
        const o = await fillUp(path, {
          ...(mode === 'sync' ? { syncMode: true } : { syncMode: false, worker: true }),
          cacheSize: MiB,
          compress: 'zstd',
        });
        assertFailedCleanly(o, `.vcap tmpfs (compressor thread, ${mode})`, /ENOSPC|no space|full/i);
        await readBack(path, o.committed);
      } finally {
        rmSync(sub, { recursive: true, force: true });
      }
    });
  }
});
