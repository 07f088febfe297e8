#!/usr/bin/env node
// Runs every generator of the docs site (the pages that must not drift from the code), timing each. Needs the
// packages built (`npm run build` at the root builds them first). `node scripts/generate.mjs cli http` runs some.
const GENERATORS = {
  config: './gen-config.mjs', // guide/_*-config.md: default tables from core's DEFAULT_* objects
  cli: './gen-cli.mjs', // reference/cli.md: every verb's --help
  http: './gen-http.mjs', // reference/http-api.md + public/openapi.json: the server's OpenAPI document
  python: './gen-python.mjs', // guide/python.md: clients/python/README.md
  bench: './gen-bench.mjs', // performance.md: bench/results/*.json (+ BENCHMARKS.md)
  api: './gen-api.mjs', // api/**: TypeDoc over the public entry points
};

const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : Object.keys(GENERATORS);
const started = performance.now();
for (const name of names) {
  if (!GENERATORS[name]) throw new Error(`unknown generator "${name}" (${Object.keys(GENERATORS).join(', ')})`);
  const t0 = performance.now();
  const { generate } = await import(GENERATORS[name]);
  const summary = await generate();
  console.log(`docs: ${name.padEnd(6)} ${summary} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
console.log(`docs: generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
