import assert from 'node:assert/strict';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { describe, test } from '@vlink/fixtures/test';
import { CopyQueue } from './copy-queue.js';

const SLOW = { timeout: 120_000 };

describe('CopyQueue', () => {
  test('close waits for the tasks queued behind a failed one before closing the connection', SLOW, async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const queue = new CopyQueue(await instance.connect());
    const failed = queue.run(async (copier) => {
      await copier.run('SELECT * FROM no_such_table');
    });
    const order: string[] = [];
    const later = queue.run(async (copier) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await copier.run('CREATE TABLE t AS SELECT range AS x FROM range(100000)');
      order.push('later task');
    });
    await assert.rejects(failed, /no_such_table/);
    await queue.close();
    order.push('closed');
    await later;
    assert.deepEqual(order, ['later task', 'closed']);
    instance.closeSync();
  });

  test(
    'one task at a time in the order queued; with a second lane two at once, close waiting for both',
    SLOW,
    async () => {
      const instance = await DuckDBInstance.create(':memory:');
      const queue = new CopyQueue(await instance.connect());
      let running = 0;
      let most = 0;
      const order: number[] = [];
      const task = (n: number) => async (copier: DuckDBConnection) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 30));
        await copier.run('SELECT 1');
        order.push(n);
        running--;
      };
      await Promise.all([1, 2, 3].map((n) => queue.run(task(n))));
      assert.deepEqual(order, [1, 2, 3]);
      assert.equal(most, 1);
      queue.addLane(await instance.connect());
      const both = [4, 5].map((n) => queue.run(task(n)));
      await queue.close();
      assert.equal(most, 2, 'the two tasks ran at once');
      assert.deepEqual(order.slice(3).sort(), [4, 5]);
      await Promise.all(both);
      instance.closeSync();
    },
  );
});
