// How busy the machine is with work that is not ours while a benchmark runs. The load average alone cannot say: our
// own benchmark adds to it, and the 1-minute average still carries the previous benchmark. So we sample the kernel's
// CPU counters (/proc/stat) and subtract the CPU time of our own process tree (this process and everything under it,
// /proc/<pid>/stat utime+stime+cutime+cstime, so reaped children stay counted): what is left is other jobs' CPU.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const TICKS_PER_S = 100; // USER_HZ on Linux (getconf CLK_TCK)
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Busy ticks of all CPUs (user, nice, system, irq, softirq, steal; not idle or iowait). */
function busyTicks() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  return user + nice + system + irq + softirq + steal;
}

/** CPU ticks spent by `root` and all its descendants (live ones, and reaped ones through cutime/cstime). */
function treeTicks(root) {
  const procs = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name, which may contain spaces and parentheses: state is field 3.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), {
        ppid: Number(f[1]),
        ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
      });
    } catch {
      // The process ended between readdir and read.
    }
  }
  const children = new Map();
  for (const [pid, p] of procs) {
    if (!children.has(p.ppid)) children.set(p.ppid, []);
    children.get(p.ppid).push(pid);
  }
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop();
    total += procs.get(pid)?.ticks ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/**
 * Starts sampling every `intervalMs`; `stop()` returns the load average at start and end and the CPU used by other
 * processes (in cores: 1.0 = one core busy all the time), mean and max over the samples. Off Linux: load averages only.
 */
export function startLoadSampler(intervalMs = 2000) {
  const loadAvgStart = loadavg().map((x) => round(x));
  let supported = true;
  const others = [];
  let last;
  const sample = () => {
    try {
      const now = { t: performance.now(), busy: busyTicks(), ours: treeTicks(process.pid) };
      if (last) {
        const seconds = (now.t - last.t) / 1000;
        const other = (now.busy - last.busy - (now.ours - last.ours)) / TICKS_PER_S / seconds;
        // Clamped: a child that died unreaped between two samples briefly looks like someone else's CPU.
        if (seconds > 0.2) others.push(Math.min(cpus().length, Math.max(0, other)));
      }
      last = now;
    } catch {
      supported = false;
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const cores = cpus().length;
      const mean = others.length ? others.reduce((a, b) => a + b, 0) / others.length : undefined;
      return {
        loadAvgStart,
        loadAvgEnd: loadavg().map((x) => round(x)),
        cores,
        othersCores:
          supported && mean !== undefined
            ? { mean: round(mean), max: round(Math.max(...others)), samples: others.length }
            : undefined,
      };
    },
  };
}

/**
 * Whether a measurement counts as taken on a loaded machine: other processes used a quarter of a core or more on
 * average, or (without CPU sampling) the 1-minute load average at start was at least half the cores.
 */
export function isLoaded(load) {
  if (!load) return undefined;
  if (load.othersCores) return load.othersCores.mean >= 0.25;
  return load.loadAvgStart[0] >= load.cores / 2;
}
