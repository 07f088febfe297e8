import type * as Reflection from 'flatbuffers_reflection';

// flatbuffers_reflection 0.0.7 ships a `reflection_generated.cjs` that prints its exports and its module object to
// stdout when it is loaded. Node loads the `.js` beside it, but Bun resolves the extensionless require to the `.cjs`,
// and bundlers taking the `module` field load the ESM build's copy: `vlink-bag cat` (NDJSON on stdout) and every
// `--json` output broke under Bun. Until upstream drops those lines, stdout is muted while the library loads (once,
// here, before any other code of the process can run in between: the import is the only thing awaited).
const log = console.log;
let library: typeof Reflection;
console.log = () => {};
try {
  library = await import('flatbuffers_reflection');
} finally {
  console.log = log;
}

export const { BaseType, Parser, Schema, Table } = library;
export type Schema = Reflection.Schema;
export type Table = Reflection.Table;
