import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { BackendWriter } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { StorageLoop } from './storage-loop.js';

/** A backend writer that records its calls and throws what the test arms. */
class ScriptedWriter implements BackendWriter {
  readonly calls: string[] = [];
  readonly tables: Array<Record<string, Record<string, number>>> = [];
  /** url → the error `write` throws for it. */
  readonly refuse = new Map<string, Error>();
  commitError: Error | undefined;
  tickError: Error | undefined;
  write(frame: Frame, urlId: number): void {
    const error = this.refuse.get(frame.url);
    if (error) throw error;
    this.calls.push(`write ${frame.url} #${urlId}`);
  }
  writeSchema(): void {
    throw new Error('bad schema');
  }
  setUrlLoss(): void {}
  commit(): void {
    if (this.commitError) throw this.commitError;
    this.calls.push('commit');
  }
  tick(): void {
    if (this.tickError) throw this.tickError;
    this.calls.push('tick');
  }
  currentFile(): string {
    return '/tmp/x.vdb';
  }
  setCounters(table: Record<string, Record<string, number>>): void {
    this.tables.push(table);
  }
  close(): void {
    this.calls.push('close');
  }
}

const frame = (url: string): Frame => ({
  timestamp: 1,
  url,
  serType: 'raw',
  schemaType: 0,
  actionType: 0,
  data: new Uint8Array(4),
});

function loopOf(writer: ScriptedWriter, table = { a: { limit: 1 } }) {
  const timerFailures: BagError[] = [];
  const loop = new StorageLoop(writer, {
    path: '/tmp/x.vdb',
    counters: () => table,
    onTimerFailure: (error) => timerFailures.push(error),
  });
  return { loop, timerFailures };
}

/** Read through a call: `assert.equal(loop.failed, undefined)` would narrow the property for the rest of a test. */
const failureOf = (loop: StorageLoop): BagError | undefined => loop.failed;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('StorageLoop (how frames reach a BackendWriter, on either thread)', () => {
  test('SCHEMA_CONFLICT and LIMIT_REACHED drop the frame only; any other error fails the writer and drops the rest', () => {
    const writer = new ScriptedWriter();
    writer.refuse.set('conflict', new BagError('SCHEMA_CONFLICT', 'other schema'));
    writer.refuse.set('full', new BagError('LIMIT_REACHED', 'row limit'));
    writer.refuse.set('disk', new Error('EIO'));
    const { loop } = loopOf(writer);

    assert.equal(loop.write(frame('conflict'), 0), false);
    assert.equal(loop.dropReason, 'schemaConflict');
    assert.equal(loop.write(frame('full'), 1), false);
    assert.equal(loop.dropReason, 'limit');
    assert.equal(loop.dropError?.code, 'LIMIT_REACHED');
    assert.equal(loop.failed, undefined);
    assert.equal(loop.write(frame('ok'), 2), true);

    assert.equal(loop.write(frame('disk'), 3), false);
    assert.equal(loop.dropReason, 'storageError');
    assert.equal(loop.dropFailedWriter, true);
    const failure = failureOf(loop);
    assert.equal(failure?.code, 'IO_ERROR');
    assert.match(failure?.message ?? '', /write failed/);
    assert.equal(failure?.url, 'disk');
    // After a storage error nothing reaches the backend: the frame is dropped with the failure as its reason.
    assert.equal(loop.write(frame('ok'), 2), false);
    assert.equal(loop.dropReason, 'storageError');
    assert.equal(loop.dropError, failure);
    assert.equal(loop.dropFailedWriter, false, 'reported once, by the write that failed it');
    assert.deepEqual(writer.calls, ['write ok #2'], 'the url id reaches the backend');
  });

  test('commit: undefined once durable; the rolled-back storage error after one; a failed commit fails the writer', () => {
    const writer = new ScriptedWriter();
    const { loop } = loopOf(writer);
    assert.equal(loop.commit(), undefined);
    writer.commitError = new Error('fsync');
    const failure = loop.commit();
    assert.match(failure?.message ?? '', /commit failed/);
    assert.equal(loop.failed, failure);

    const other = new ScriptedWriter();
    other.refuse.set('disk', new Error('EIO'));
    const rolledBack = loopOf(other).loop;
    rolledBack.write(frame('disk'), 3);
    assert.equal(rolledBack.commit(), rolledBack.failed);
    assert.deepEqual(other.calls, [], 'no commit after a storage error');
  });

  test('a rejected schema is returned as a SCHEMA_CONFLICT warning and does not fail the writer', () => {
    const { loop } = loopOf(new ScriptedWriter());
    const warning = loop.writeSchema({ name: 's', encoding: '', schemaType: 0, data: new Uint8Array(0) });
    assert.equal(warning?.code, 'SCHEMA_CONFLICT');
    assert.equal(loop.failed, undefined);
  });

  test('without a tick the counters go to the backend a second after they changed, once for many changes', async () => {
    const writer = new ScriptedWriter();
    const { loop } = loopOf(writer);
    loop.countersChanged();
    loop.countersChanged();
    assert.equal(writer.tables.length, 0);
    await wait(1150);
    assert.deepEqual(writer.tables, [{ a: { limit: 1 } }]);
    loop.close();
  });

  test('the tick hands changed counters over before the backend tick; a tick failure fails the writer', async () => {
    const writer = new ScriptedWriter();
    const { loop, timerFailures } = loopOf(writer);
    loop.startTicking({ unref: true });
    loop.countersChanged();
    await wait(1150);
    assert.equal(writer.tables.length, 1);
    assert.deepEqual(writer.calls, ['tick']);
    writer.tickError = new Error('disk gone');
    await wait(1300);
    assert.equal(timerFailures.length, 1);
    assert.match(timerFailures[0]!.message, /periodic commit failed/);
    assert.equal(loop.failed, timerFailures[0]);
    loop.close();
  });

  test('close stores the counters, closes once, and then reports no file', () => {
    const writer = new ScriptedWriter();
    const { loop } = loopOf(writer);
    assert.equal(loop.currentFile(), '/tmp/x.vdb');
    assert.equal(loop.close(), undefined);
    assert.equal(loop.close(), undefined);
    assert.deepEqual(writer.tables, [{ a: { limit: 1 } }]);
    assert.deepEqual(writer.calls, ['close']);
    assert.equal(loop.currentFile(), '');
  });
});
