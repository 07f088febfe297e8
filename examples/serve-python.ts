// Serve a directory of bags over HTTP (the same server as `vlink-bag serve`), query it with fetch, and, when the
// Python client's virtualenv exists (clients/python/.venv, made by `npm test`), read the bag from Python too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BagWriter, createFrame, SchemaType } from '@vlink/bag';
import { serve } from '@vlink/bag-server';

const root = mkdtempSync(join(tmpdir(), 'vlink-example-serve-'));
const writer = await BagWriter.create(join(root, 'runs', 'drive.vdb'), { syncMode: true, compress: 'auto' });
for (let i = 0; i < 100; i++) {
  writer.push(
    createFrame({
      url: 'dds://imu',
      serType: 'json',
      schemaType: SchemaType.Raw,
      timestamp: i * 10_000,
      data: new TextEncoder().encode(JSON.stringify({ i })),
    }),
  );
}
await writer.close();

// port 0 picks a free port; a host other than loopback would need a token. Node, Bun and Deno each get their adapter.
await using server = await serve({ root, port: 0 });
console.log(`serving ${root} at ${server.url} (API docs at ${server.url}/v1/docs)`);

// Bag ids are paths under the root, URL-encoded as one segment.
const { bags } = (await (await fetch(`${server.url}/v1/bags`)).json()) as {
  bags: Array<{ id: string; messageCount: number }>;
};
assert.deepEqual(
  bags.map((b) => [b.id, b.messageCount]),
  [['runs/drive.vdb', 100]],
);
const id = encodeURIComponent('runs/drive.vdb');
const page = (await (await fetch(`${server.url}/v1/bags/${id}/messages?urls=dds://imu&begin=500&limit=10`)).json()) as {
  messages: Array<{ timestamp: number; data: string }>;
  next: string | null;
};
assert.equal(page.messages.length, 10);
assert.equal(page.messages[0]!.timestamp, 500_000); // µs since recording start; begin/end are ms
assert.equal(atob(page.messages[0]!.data), '{"i":50}'); // payloads are base64 in JSON
assert.ok(page.next, 'more pages follow');

// The Python client (clients/python): stream the messages of the same bag.
const python = findPython();
const snippet = `
import sys
from vlink_bag import Client
with Client(sys.argv[1]) as client:
    bag = client.bag("runs/drive.vdb")
    messages = list(bag.read_messages(start_time=200_000, urls=["dds://imu"]))
    print(len(messages), messages[0].timestamp, messages[0].message.decode())
`;
if (python) {
  // Asynchronous on purpose: the server runs on this process's event loop and must keep answering.
  const { stdout } = await promisify(execFile)(python, ['-c', snippet, server.url], { timeout: 60_000 });
  console.log(`python says: ${stdout.trim()}`);
  assert.equal(stdout.trim(), '80 200000 {"i":20}');
} else {
  console.log('Python client not installed here (no clients/python/.venv, no $VLINK_PYTHON); to try it:');
  console.log('  python -m venv .venv && .venv/bin/pip install -e clients/python    # or: pip install vlink-bag');
  console.log(`  save this as read.py and run: .venv/bin/python read.py ${server.url}\n${snippet}`);
}

await server.close();
rmSync(root, { recursive: true, force: true });
console.log('serve-python: ok');

/** clients/python/.venv/bin/python of this repository (or $VLINK_PYTHON), looked up from this file upwards. */
function findPython(): string | undefined {
  if (process.env['VLINK_PYTHON']) return process.env['VLINK_PYTHON'];
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = resolve(dir, 'clients/python/.venv/bin/python');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}
