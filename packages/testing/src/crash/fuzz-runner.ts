import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CaseOutcome, FuzzFormat } from './fuzz.js';
import { childCommand, crashScript, repoRoot, type RuntimeName } from './runtime.js';

export interface FuzzFinding {
  index: number;
  kind: NonNullable<CaseOutcome['kind']> | 'hang' | 'crash';
  detail: string;
  base?: string;
  target?: string;
  mutation?: string;
}

export interface FuzzSummary {
  format: FuzzFormat;
  seed: number;
  cases: number;
  /** Cases where the bag opened at all (strict or tryToFix), and frames read by the tryToFix opens. */
  opened: number;
  frames: number;
  findings: FuzzFinding[];
  slowest: { index: number; ms: number; mutation: string };
  ms: number;
}

export interface FuzzRunOptions {
  format: FuzzFormat;
  seed: number;
  cases: number;
  start?: number;
  /** A case taking longer than this is a hang: the child is killed and the run goes on with the next case. */
  timeoutMs?: number;
  runtime?: RuntimeName;
  onCase?: (index: number, outcome: (CaseOutcome & { mutation?: string }) | undefined) => void;
}

type Ended = CaseOutcome & { base: string; target: string; mutation: string };

/**
 * Runs fuzz cases in child processes of this runtime under a watchdog: a case that hangs (more than `timeoutMs`) or
 * kills the process (a native crash) is recorded as a finding and the next child starts after it.
 */
export async function runFuzz(options: FuzzRunOptions): Promise<FuzzSummary> {
  const { format, seed, cases } = options;
  const timeoutMs = options.timeoutMs ?? 5000;
  const start = options.start ?? 0;
  const end = start + cases;
  const dir = mkdtempSync(join(tmpdir(), 'vlink-fuzz-'));
  const summary: FuzzSummary = {
    format,
    seed,
    cases,
    opened: 0,
    frames: 0,
    findings: [],
    slowest: { index: -1, ms: 0, mutation: '' },
    ms: 0,
  };
  const began = performance.now();
  try {
    let next = start;
    while (next < end) next = await runChild(next);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  summary.ms = performance.now() - began;
  return summary;

  /** Runs cases from `first` until the child finishes or dies; returns the next case to run. */
  function runChild(first: number): Promise<number> {
    const [bin, args] = childCommand(
      crashScript('fuzz-child'),
      [format, String(seed), String(first), String(end - first), join(dir, `w${first}`)],
      options.runtime,
    );
    const child = spawn(bin, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let current = -1;
    let done = false;
    let stderr = '';
    let pending = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (current >= 0)
          summary.findings.push({ index: current, kind: 'hang', detail: `no result after ${timeoutMs} ms` });
        child.kill('SIGKILL');
      }, ms);
    };
    // Building the base recordings may take a while on a loaded machine; each case gets `timeoutMs`.
    arm(60_000);
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-8000)));
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      pending += text;
      for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
        const line = pending.slice(0, at);
        pending = pending.slice(at + 1);
        if (line.startsWith('S ')) {
          current = Number(line.slice(2));
          arm(timeoutMs);
        } else if (line.startsWith('E ')) {
          const space = line.indexOf(' ', 2);
          const index = Number(line.slice(2, space));
          const outcome = JSON.parse(line.slice(space + 1)) as Ended;
          if (outcome.opened > 0) summary.opened++;
          summary.frames += outcome.frames;
          if (outcome.ms > summary.slowest.ms) summary.slowest = { index, ms: outcome.ms, mutation: outcome.mutation };
          if (outcome.status === 'finding') {
            summary.findings.push({
              index,
              kind: outcome.kind!,
              detail: outcome.detail ?? '',
              base: outcome.base,
              target: outcome.target,
              mutation: outcome.mutation,
            });
          }
          options.onCase?.(index, outcome);
          current = -1;
        } else if (line === 'D') done = true;
      }
    });
    return new Promise((resolve) => {
      child.on('close', () => {
        clearTimeout(timer);
        if (done) return resolve(end);
        if (current >= 0) {
          if (!summary.findings.some((f) => f.index === current && f.kind === 'hang')) {
            summary.findings.push({
              index: current,
              kind: 'crash',
              detail: `the process died (${child.signalCode ?? child.exitCode}): ${stderr.trim().slice(-2000)}`,
            });
          }
          options.onCase?.(current, undefined);
          return resolve(current + 1);
        }
        // Died outside a case (building the bases): that is a harness failure, not a finding to skip past.
        summary.findings.push({
          index: first,
          kind: 'crash',
          detail: `the fuzz child failed outside a case (${child.signalCode ?? child.exitCode}): ${stderr.trim().slice(-2000)}`,
        });
        resolve(end);
      });
    });
  }
}
