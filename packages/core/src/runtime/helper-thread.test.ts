import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { HelperThread } from './helper-thread.js';
import { createThreadControl, FAILED, STATE, STOPPED, TAIL } from './thread-control.js';

const failure = (message: string) => new BagError('IO_ERROR', `helper failed: ${message}`);

describe('HelperThread (the writer side of a helper thread)', () => {
  test("a helper's failure is thrown by the writer's next wait, and keeps being thrown; stop() still returns", () => {
    const { shared, control } = createThreadControl();
    const thread = new HelperThread({
      module: new URL('./failing-thread.test.helper.js', import.meta.url),
      control,
      workerData: { control: shared },
      failure,
    });
    thread.handOver(1);
    assert.throws(
      () => thread.waitFor((tail) => tail === thread.handed),
      (error: BagError) => error.code === 'IO_ERROR' && /helper failed: disk on fire/.test(error.message),
    );
    assert.equal(Atomics.load(control.control, STATE), FAILED);
    assert.throws(() => thread.throwIfFailed(), { code: 'IO_ERROR' });
    thread.stop();
  });

  test('a helper still starting is not ready, and stop() with nothing handed over does not wait for it', async () => {
    const { shared, control } = createThreadControl();
    const thread = new HelperThread({
      module: new URL('./slow-start-thread.test.helper.js', import.meta.url),
      control,
      workerData: { control: shared, startMs: 3000 },
      failure,
    });
    assert.equal(thread.ready, false);
    const started = performance.now();
    thread.stop();
    assert.ok(performance.now() - started < 1000, `stop() took ${performance.now() - started} ms`);
    // Work handed over is still waited for: stop() returns once the helper has started, done it and ended.
    const quick = createThreadControl();
    const other = new HelperThread({
      module: new URL('./slow-start-thread.test.helper.js', import.meta.url),
      control: quick.control,
      workerData: { control: quick.shared, startMs: 200 },
      failure,
    });
    other.handOver(2);
    other.stop();
    assert.equal(other.ready, true);
    assert.equal(Atomics.load(quick.control.control, TAIL), 2);
    assert.equal(Atomics.load(quick.control.control, STATE), STOPPED);
  });

  test('a helper whose module cannot load fails the writer instead of leaving it waiting', async () => {
    const { shared, control } = createThreadControl();
    const thread = new HelperThread({
      module: new URL('./no-such-helper.js', import.meta.url),
      control,
      workerData: { control: shared },
      failure,
    });
    // Node, Bun and Deno all report the load error as the worker's `error` event, on this thread's event loop.
    for (let i = 0; i < 200 && Atomics.load(control.control, STATE) !== FAILED; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    thread.handOver(1);
    assert.throws(() => thread.waitFor((tail) => tail === thread.handed), { code: 'IO_ERROR' });
    thread.stop();
  });
});
