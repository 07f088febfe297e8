#!/usr/bin/env node
// No import cycles: reads the compiled import graph of every package's `dist` (static imports, re-exports and
// `import('./literal.js')`, which is what a runtime follows; `import type` is already gone) and fails on any cycle
// between modules of one package, naming its files. A lazy `import()` counts: a cycle through one still means two
// modules know each other, and the order they finish loading in depends on who asks first. Cycles between packages
// cannot happen (each package imports only the packages below it, by name, which the workspace graph forbids to
// loop), so only relative specifiers are followed. Run after the build (test-all.mjs runs it in the `lint` stage).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const SPECIFIER =
  /(?:^|[;\n])\s*(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|[;\n])\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function jsFiles(dir, out = []) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) jsFiles(path, out);
    else if (entry.endsWith('.js')) out.push(path);
  }
  return out;
}

/** The relative modules `file` imports, as absolute paths of files that exist. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const found = new Set();
  for (const match of text.matchAll(SPECIFIER)) {
    const target = resolve(dirname(file), match[1] ?? match[2] ?? match[3]);
    if (existsSync(target)) found.add(target);
  }
  return [...found];
}

/** Strongly connected components with more than one module, or a module importing itself (Tarjan). */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const found = [];
  const visit = (node) => {
    const entry = { index, low: index, onStack: true };
    index++;
    state.set(node, entry);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const seen = state.get(next);
      if (!seen) {
        visit(next);
        entry.low = Math.min(entry.low, state.get(next).low);
      } else if (seen.onStack) entry.low = Math.min(entry.low, seen.index);
    }
    if (entry.low === entry.index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        state.get(member).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

const packagesDir = join(root, 'packages');
const problems = [];
let modules = 0;
let built = 0;
for (const name of readdirSync(packagesDir).sort()) {
  const dist = join(packagesDir, name, 'dist');
  if (!existsSync(dist)) continue;
  built++;
  const graph = new Map();
  for (const file of jsFiles(dist)) graph.set(file, importsOf(file));
  modules += graph.size;
  for (const component of cycles(graph)) problems.push(component.map((f) => relative(root, f)).join(' <-> '));
}
if (built === 0) {
  console.error('not ok - no packages/*/dist: build first (npx turbo run build)');
  process.exit(1);
}
if (problems.length > 0) {
  console.error(`not ok - ${problems.length} import cycle(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`ok - no import cycle among the ${modules} compiled modules of ${built} packages`);
