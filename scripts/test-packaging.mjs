#!/usr/bin/env node
// Packaging checks for every public package: publint, the manifest fields users rely on, `changeset status`, and a
// `changeset version` rehearsal in a scratch copy that must bump internal dependencies and write a CHANGELOG each.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { publint } from 'publint';

const root = resolve(import.meta.dirname, '..');
const PUBLIC = ['core', 'backend-sqlite', 'backend-mcap', 'bag', 'http-api', 'cli'];
let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
    passed++;
  } catch (error) {
    console.log(`not ok - ${name}: ${error.message}`);
    failed++;
  }
}

for (const dir of PUBLIC) {
  const pkgDir = join(root, 'packages', dir);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  await check(`${pkg.name}: publint`, async () => {
    const { messages } = await publint({ pkgDir, strict: true });
    const problems = messages.filter((m) => m.type !== 'suggestion');
    if (problems.length) throw new Error(JSON.stringify(problems));
  });
  await check(`${pkg.name}: manifest fields`, () => {
    for (const field of ['license', 'repository', 'keywords', 'files', 'exports', 'description']) {
      if (pkg[field] === undefined) throw new Error(`missing ${field}`);
    }
    // false, or the exact modules that register something at import (bundlers must keep those even when only
    // re-exports are used, or backends would silently go unregistered).
    const effects = pkg.sideEffects;
    if (effects !== false && !(Array.isArray(effects) && effects.every((f) => f.startsWith('./dist/')))) {
      throw new Error('sideEffects must be false or a list of ./dist modules');
    }
    if (pkg.type !== 'module') throw new Error('must be ESM');
    for (const [entry, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'object' && Object.keys(target)[0] !== 'types')
        throw new Error(`exports["${entry}"] must list types first`);
    }
  });
}

const changeset = join(root, 'node_modules', '.bin', 'changeset');
await check('changeset status', () => execFileSync(changeset, ['status'], { cwd: root, stdio: 'pipe' }));
await check('changeset version writes CHANGELOGs and bumps internal dependencies', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'vlink-changeset-'));
  try {
    for (const entry of ['package.json', '.changeset', 'packages', 'apps', 'bench']) {
      if (existsSync(join(root, entry))) {
        cpSync(join(root, entry), join(scratch, entry), {
          recursive: true,
          filter: (src) => !src.includes('node_modules') && !src.includes('/dist'),
        });
      }
    }
    execFileSync('git', ['init', '-q'], { cwd: scratch });
    execFileSync(changeset, ['version'], { cwd: scratch, stdio: 'pipe' });
    const bag = JSON.parse(readFileSync(join(scratch, 'packages', 'bag', 'package.json'), 'utf8'));
    const core = JSON.parse(readFileSync(join(scratch, 'packages', 'core', 'package.json'), 'utf8'));
    if (bag.dependencies['@vlink/bag-core'] !== core.version)
      throw new Error(`@vlink/bag depends on core ${bag.dependencies['@vlink/bag-core']}, core is ${core.version}`);
    for (const dir of PUBLIC) {
      if (!existsSync(join(scratch, 'packages', dir, 'CHANGELOG.md'))) throw new Error(`no CHANGELOG for ${dir}`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
