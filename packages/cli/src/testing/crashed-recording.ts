// Run as a script: `<runtime> crashed-recording.js <out.vdb|out.vcap|out.vdbx> [writer options as JSON]`. Records in
// sync mode with 1 KiB commits and then kills its own process before the file is closed: what a power cut leaves
// behind, at the same point on every run and under every runtime (a kill from outside lands wherever the recorder
// happens to be). A split recording (`{"splitBySize":100000}`) is left with its last segment out of its manifest.
import { BagWriter, createFrame, SchemaType } from '@vlink/bag';

const path = process.argv[2];
if (!path) throw new Error('usage: crashed-recording <out>');
const options = process.argv[3] ? (JSON.parse(process.argv[3]) as Record<string, unknown>) : {};
const writer = await BagWriter.create(path, { syncMode: true, cacheSize: 1024, ...options });
for (let i = 0; i < 5000; i++) {
  const data = new Uint8Array(200).fill(i & 255);
  writer.push(
    createFrame({ url: `dds://crash/${i % 5}`, serType: 'raw', schemaType: SchemaType.Raw, timestamp: i * 1000, data }),
  );
}
process.kill(process.pid, 'SIGKILL');
