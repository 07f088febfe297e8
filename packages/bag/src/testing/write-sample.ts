#!/usr/bin/env node
/**
 * Writes `sampleFrames()` to the bag given on the command line. The cross-runtime test runs this script under Node,
 * Bun and Deno and reads every result back in the runtime under test.
 */
import { BagWriter, SAMPLE_PROTO_SCHEMA_FOR_SCRIPT, sampleFramesForScript } from './sample-source.js';

const path = process.argv[2];
if (!path) {
  console.error('usage: write-sample <out.vdb|out.vcap|...>');
  process.exit(2);
}
const writer = await BagWriter.create(path, { syncMode: true, compress: process.argv[3] ?? 'none' } as never);
writer.pushSchema(SAMPLE_PROTO_SCHEMA_FOR_SCRIPT);
for (const frame of sampleFramesForScript()) {
  if (writer.push(frame) < 0) throw new Error(`push failed: ${writer.stats().lastError}`);
}
await writer.close();
