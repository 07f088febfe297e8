/**
 * The process the counters crash test kills: records small frames at about 500 Hz into the bag given on the command
 * line, counts application causes through `writer.count` once it has written 50 frames (`/a` missedSlot × 7, `/b`
 * submitFailed × 3), prints `counted`, and records on until it is killed.
 *
 * Usage: counters-child <path> <sync|worker>
 */
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';

const [path, mode = 'worker'] = process.argv.slice(2);
if (!path) {
  process.stderr.write('usage: counters-child <path> <sync|worker>\n');
  process.exit(2);
}
const worker = mode === 'worker';
const writer = await BagWriter.create(path, {
  syncMode: !worker,
  ...(worker ? { worker: true } : {}),
  cacheSize: 16 * 1024,
  splitBySize: 256 * 1024,
  startTimestamp: 1_700_000_000_000,
});
writer.registerErrorCallback((error) => process.stderr.write(`writer error: ${error.code} ${error.message}\n`));
const data = new Uint8Array(1024).fill(7);
for (let seq = 0; ; seq++) {
  writer.push({
    timestamp: -1,
    url: '/a',
    data,
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  });
  if (seq === 50) {
    writer.count('/a', 'missedSlot', 7);
    writer.count('/b', 'submitFailed', 3);
    process.stdout.write('counted\n');
  }
  await new Promise((resolve) => setTimeout(resolve, 2));
}
