#!/usr/bin/env node
import { flushStdio } from './lib/flush-stdio.js';

// Loaded dynamically so a broken installation (a missing build of a dependency) is one line too, not a stack trace.
let code: number;
try {
  const { run } = await import('./cli.js');
  code = await run(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`vlink-bag: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  if (process.argv.includes('--verbose') && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  code = 1;
}
// Exit explicitly: a closed recording or server may leave handles (stdin, timers) that would keep the process alive.
// Everything written to stdout/stderr is delivered first (flush-stdio.ts: Bun would cut a pipe's output short).
await flushStdio();
process.exit(code);
