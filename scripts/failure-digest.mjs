/**
 * The failing tests of a stage's log, picked out to be printed again after the stage times at the very end of
 * `npm test`: CI shows only the tail of a long run, and a runtime's failure otherwise sits hundreds of lines above
 * it, out of sight, behind the stages that ran after it in the other lane.
 *
 * Each runner marks a failure in its own way; a few lines of context go with each mark, since the reason is printed
 * before the mark (Bun), after it (Node's TAP) or in a block of its own (Deno, pytest).
 */

const MAX_LINES = 120;

/** Which lines mark a failure, and how many lines before and after each go with it. */
const markers = {
  bun: { mark: /^\(fail\)|^error: |^# Unhandled error/, before: 14, after: 0 },
  node: { mark: /^\s*not ok \d+/, before: 0, after: 14 },
  coverage: { mark: /./, before: 0, after: 0 },
  deno: { mark: /=> .*:\d+:\d+$|^error: |FAILED/, before: 0, after: 10 },
  python: { mark: /^(FAILED|ERROR) |^E {3}/, before: 0, after: 0 },
};
const anyRunner = { mark: /not ok|FAIL|Error|error:/, before: 2, after: 6 };

/**
 * @param {string} stage the stage's name (`bun`, `node`, `deno`, `python`, …)
 * @param {string} log everything the stage printed
 * @returns {string[]} the lines to print; the last lines of the log when no mark is found (a crash, a timeout)
 */
export function failureDigest(stage, log) {
  const lines = log.split('\n');
  const { mark, before, after } = markers[stage] ?? anyRunner;
  const keep = new Set();
  lines.forEach((line, at) => {
    if (!mark.test(line)) return;
    for (let i = Math.max(0, at - before); i <= Math.min(lines.length - 1, at + after); i++) keep.add(i);
  });
  if (keep.size === 0) return ['(no failing test named in the log; its last lines:)', ...lines.slice(-40)];
  const picked = [];
  let previous = -2;
  for (const at of [...keep].sort((a, b) => a - b)) {
    if (at !== previous + 1 && picked.length > 0) picked.push('  …');
    picked.push(lines[at]);
    previous = at;
  }
  if (picked.length <= MAX_LINES) return picked;
  return [...picked.slice(0, MAX_LINES), `  … ${picked.length - MAX_LINES} more lines in the stage's output above`];
}
