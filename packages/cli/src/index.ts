/**
 * `@vlink/bag-cli`: the `vlink-bag` command line. Programs can run it in-process with `run(argv)` or extend the
 * commander program from `createProgram()`.
 */
export { run } from './cli.js';
export { createProgram, CLI_VERSION } from './program.js';
export { frameLine, metaLine, schemaLine, parseLine } from './lib/ndjson.js';
export type { FrameJson, MetaJson, SchemaJson, ParsedLine } from './lib/ndjson.js';
