import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BagError, BagReader, extensionOf, repairBag } from '@vlink/bag';
import { PayloadDecoder } from '@vlink/bag-decode';
import { isOriginal } from './fuzz-bases.js';
import type { FuzzCase } from './fuzz-mutations.js';

export { buildBases, FUZZ_FORMATS, type FuzzBase, type FuzzFormat } from './fuzz-bases.js';
export { makeCase, prng, type FuzzCase } from './fuzz-mutations.js';

/**
 * The corrupted-input harness: valid recordings of each format, mutated by a seeded PRNG (bit flips, overwritten
 * bytes, truncation at record (MCAP) / page (SQLite) boundaries, huge length fields, zeroed and spliced ranges, and
 * for split recordings garbage manifests), then opened and read every way a user can. Only typed `BagError`s may
 * escape. A case is a pure function of (format, seed, index), so any finding can be replayed alone. The bases are
 * made in fuzz-bases.ts, the cases in fuzz-mutations.ts; this file runs a case and judges what came out.
 */

/** What running one case found. */
export interface CaseOutcome {
  /** `ok`: everything ran or failed with a `BagError`. */
  status: 'ok' | 'finding';
  kind?:
    | 'untyped-error'
    | 'internal-error'
    | 'fix-then-check'
    | 'memory'
    | 'corrupted-frame'
    | 'repair-lost-readable'
    | 'more-than-written';
  detail?: string;
  /** How many of the two opens (strict, tryToFix) succeeded, and the frames read by the tryToFix one. */
  opened: number;
  frames: number;
  ms: number;
}

const MiB = 1024 * 1024;

/**
 * Runs one case in `dir`: opens the bag strict and with `tryToFix`, reads info, schemas and every frame (each payload
 * through `@vlink/bag-decode`), runs `check()`, then repairs a copy with `fix()`. A `.vcap` that `fix()` repaired must pass `check()`.
 */
export async function runCase(fuzzCase: FuzzCase, dir: string): Promise<CaseOutcome> {
  const started = performance.now();
  const outcome: CaseOutcome = { status: 'ok', opened: 0, frames: 0, ms: 0 };
  const finding = (kind: NonNullable<CaseOutcome['kind']>, detail: string) => {
    if (outcome.status === 'ok') Object.assign(outcome, { status: 'finding', kind, detail });
  };
  // Damage must be a BagError that says what is wrong: `INTERNAL` is typed but means our code failed (e.g. a repair
  // whose copy fails its own check), so it is a finding too.
  const untyped = (where: string, error: unknown) => {
    if (!BagError.isInstance(error))
      finding(
        'untyped-error',
        `${where}: ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error)}`,
      );
    else if (error.code === 'INTERNAL') finding('internal-error', `${where}: ${error.message}`);
  };
  // Damage can lose frames, never add any: more than the base holds means rows or messages read twice.
  const atMostWritten = (where: string, frames: number) => {
    if (fuzzCase.written !== undefined && frames > fuzzCase.written)
      finding('more-than-written', `${where}: ${frames} frames from a recording of ${fuzzCase.written}`);
  };
  const place = (sub: string): string => {
    const at = join(dir, sub);
    rmSync(at, { recursive: true, force: true });
    mkdirSync(at, { recursive: true });
    for (const [name, bytes] of fuzzCase.files) writeFileSync(join(at, name), bytes);
    return join(at, fuzzCase.main);
  };

  for (const tryToFix of [false, true]) {
    const path = place(tryToFix ? 'fix-read' : 'read');
    let reader: BagReader | undefined;
    try {
      reader = await BagReader.create(path, { tryToFix });
      outcome.opened++;
      // Payloads through the decoders built from what the (damaged) file says of its schemas: decode never throws.
      const decoder = new PayloadDecoder({ schemas: reader.getSchemas(), urls: reader.getInfo().urls });
      let n = 0;
      try {
        for await (const frame of reader.frames()) {
          n++;
          try {
            decoder.decode(frame);
          } catch (error) {
            finding('untyped-error', `decode of ${frame.url}: ${String(error)}`);
          }
          // Chunks with CRCs: a damaged byte must surface as an error, never as a frame with other bytes.
          if (fuzzCase.checksummed && !isOriginal(frame))
            finding('corrupted-frame', `${frame.url} @${frame.timestamp}: bytes differ from what was written`);
        }
      } catch (error) {
        untyped('frames()', error);
      }
      if (tryToFix) outcome.frames = n;
      atMostWritten(tryToFix ? 'frames() with tryToFix' : 'frames()', n);
      try {
        // A window and a url filter take other paths (block skipping, index queries).
        for await (const _ of reader.frames({ beginTime: 100, endTime: 500, filterUrls: ['dds://imu'] })) void _;
      } catch (error) {
        untyped('frames(window)', error);
      }
      await reader.check();
    } catch (error) {
      untyped(tryToFix ? 'open/read with tryToFix' : 'open/read', error);
    } finally {
      try {
        reader?.close();
      } catch (error) {
        untyped('close', error);
      }
    }
  }

  const path = place('fix');
  let fixer: BagReader | undefined;
  try {
    fixer = await BagReader.create(path, { tryToFix: true, readOnly: false });
    if ((await fixer.fix()) && fuzzCase.main.endsWith('.vcap') && !(await fixer.check())) {
      const report = (fixer as unknown as { backend: { lastCheckReport?: { problems: string[] } } }).backend
        .lastCheckReport;
      finding('fix-then-check', report?.problems.slice(0, 5).join('; ') ?? 'check() false after fix()');
    }
    let fixed = 0;
    for await (const frame of fixer.frames()) {
      fixed++;
      if (fuzzCase.checksummed && !isOriginal(frame))
        finding('corrupted-frame', `after fix(): ${frame.url} @${frame.timestamp}: bytes differ from what was written`);
    }
    atMostWritten('frames() after fix()', fixed);
  } catch (error) {
    untyped('fix', error);
  } finally {
    try {
      fixer?.close();
    } catch (error) {
      untyped('close after fix', error);
    }
  }

  // repairBag on a copy: the repaired bag never holds fewer frames than a reader could read from the damaged one.
  const input = place('repair');
  try {
    const report = await repairBag(input, { output: join(dir, 'repair', `out${extensionOf(input)}`) });
    // Frames a reader returns with bytes the damaged file does not have (made up as zeros) are not readable ones.
    atMostWritten('repairBag', report.frames);
    if (report.frames < report.readableFrames - report.madeUpFrames)
      finding(
        'repair-lost-readable',
        `${report.frames} frames repaired, ${report.readableFrames} were readable (${report.madeUpFrames} made up)`,
      );
  } catch (error) {
    untyped('repairBag', error);
  }

  // A buffer sized from an untrusted length would show here (live ArrayBuffers right after the case, before a GC).
  const arrayBuffers = process.memoryUsage().arrayBuffers;
  if (arrayBuffers > 512 * MiB)
    finding('memory', `${Math.round(arrayBuffers / MiB)} MiB of ArrayBuffers after the case`);
  outcome.ms = performance.now() - started;
  return outcome;
}
