#!/usr/bin/env node
// Runs every generator of the docs site (the pages that must not drift from the code), timing each. Needs the
// packages built (`npm run build` at the root builds them first). `node scripts/generate.mjs cli http` runs some.
// The generators write different files, so they run concurrently: the CLI's --help runs in child processes while
// TypeDoc works in this one.
const GENERATORS = {
  config: './gen-config.mjs', // guide/_*-config.md: default tables from core's DEFAULT_* objects
  cli: './gen-cli.mjs', // reference/cli.md, guide/cli.md: every verb's --help, the CLI README
  http: './gen-http.mjs', // reference/http-api.md + public/openapi.json: the server's OpenAPI document
  python: './gen-python.mjs', // guide/python.md: clients/python/README.md
  bench: './gen-bench.mjs', // performance.md: bench/results/*.json (+ BENCHMARKS.md)
  api: './gen-api.mjs', // api/**: TypeDoc over the public entry points
};

const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : Object.keys(GENERATORS);
for (const name of names) {
  if (!GENERATORS[name]) throw new Error(`unknown generator "${name}" (${Object.keys(GENERATORS).join(', ')})`);
}
const started = performance.now();
const results = await Promise.allSettled(
  names.map(async (name) => {
    const t0 = performance.now();
    const { generate } = await import(GENERATORS[name]);
    const summary = await generate();
    console.log(`docs: ${name.padEnd(6)} ${summary} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }),
);
const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [[names[i], r.reason]] : []));
for (const [name, error] of failed) console.error(`docs: ${name} failed: ${error?.stack ?? error}`);
if (failed.length > 0) process.exit(1);
console.log(`docs: generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
