/**
 * Interruptible waits for a replay loop: `wait(ms)` resolves after `ms` or as soon as `wake()` is called, and clears
 * its timer either way, so a hundred idle replays hold no stray timers.
 */
export class Waiter {
  private readonly pending = new Set<() => void>();

  wait(ms = Infinity): Promise<void> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        this.pending.delete(done);
        resolve();
      };
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.max(0, ms));
      this.pending.add(done);
    });
  }

  wake(): void {
    for (const done of [...this.pending]) done();
  }
}
