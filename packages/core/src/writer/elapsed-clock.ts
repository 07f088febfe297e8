/**
 * The writer's own clock for frames pushed with a negative timestamp: µs since the clock was (re)started. VLink
 * starts it at construction and restarts it when the writer's loop begins (format reference §2.9). Monotonic on purpose, so a
 * wall-clock step during a recording cannot reorder frames.
 */
export class ElapsedClock {
  private origin = performance.now();

  restart(): void {
    this.origin = performance.now();
  }

  nowUs(): number {
    return Math.floor((performance.now() - this.origin) * 1000);
  }
}
