import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { type Backend, findBackend, registeredExtensions } from './index.js';

// The HTTP server reads a bag in its worker threads (where a deadline can stop it) only when the bag's backend says
// how to load it there, `Backend.workerModule`; any other bag is read on the server's own thread, where one slow or
// hostile bag holds every request. The read-only foreign formats had none: ROS 1, rosbag2, Apollo and ULog bags were
// all read on the server's thread.

describe('every backend @vlink/bag registers can be loaded in a worker thread', () => {
  const backends = new Map<string, Backend>();
  for (const extension of registeredExtensions()) {
    const backend = findBackend(`x${extension}`);
    if (backend) backends.set(backend.name, backend);
  }

  test('the registry has the formats the package names', () => {
    assert.deepEqual([...backends.keys()].sort(), [
      'cyber-record',
      'mcap',
      'mcap-foreign',
      'rosbag',
      'rosbag2',
      'sqlite',
      'ulog',
    ]);
  });

  for (const [name, backend] of backends) {
    test(`${name}: its workerModule exports it by name, for the same extensions`, async () => {
      assert.ok(backend.workerModule, `${name} has no workerModule`);
      const module = (await import(backend.workerModule)) as Record<string, unknown>;
      const found = Object.values(module).find(
        (value): value is Backend =>
          typeof value === 'object' && value !== null && (value as { name?: unknown }).name === name,
      );
      assert.ok(found, `${backend.workerModule} exports no backend named ${name}`);
      assert.deepEqual(found.extensions, backend.extensions);
      assert.equal(found.readOnly, backend.readOnly);
    });
  }
});
