// How fast the current process copies memory, as a covariate for bench/ab-builds.mjs.
//
// On this project's 2-vCPU VM a process settles for its whole life in a fast or a slow state for memory-bound loops,
// whatever runs in it (2026-12-07: the loop below, run twice as long, took 25–30 ms in some processes and 50–56 ms in
// others, on Node and Bun alike; it takes 11–12 and 18–23 ms as it is; a C memcpy loop varied 7–12 ms by process; a
// loop of arithmetic alone did not vary). The same process's 200k-frame `.vcap` write followed it (Bun: about 50 ms
// beside a fast loop, 85–95 beside a slow one), so much of the spread between two builds' processes is this state, not
// the builds. Timing this loop in every child process lets the harness compare the builds at the same state
// (`adjustedSpeed` in ab-stats.mjs).

const SOURCES = Array.from({ length: 8 }, (_, i) => new Uint8Array(64).fill(i + 1));
const TARGET = new Uint8Array(4 << 20);

/** One pass: 600,000 copies of 64 B into a 4 MiB buffer, as a recorder's chunk builder does. Returns ms. */
function pass() {
  let offset = 0;
  const t0 = performance.now();
  for (let i = 0; i < 600_000; i++) {
    if (offset + 64 > TARGET.length) offset = 0;
    TARGET.set(SOURCES[i & 7], offset);
    offset += 72;
  }
  return performance.now() - t0;
}

/** The median of three passes after one untimed pass (ms). */
export function processSpeed() {
  pass();
  const times = [pass(), pass(), pass()].sort((a, b) => a - b);
  return times[1];
}
