#!/usr/bin/env node
// Packaging checks for every public package: publint, the manifest fields users rely on, a tarball without test code
// (`npm pack --dry-run`), engines that every
// dependency supports and that the suite runs on, `changeset status`, and a `changeset version` rehearsal in a scratch copy that must bump internal dependencies and write a CHANGELOG each.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { publint } from 'publint';
import semver from 'semver';
import { PUBLIC } from './public-packages.mjs';

const root = resolve(import.meta.dirname, '..');
/**
 * Test code, by the suite's naming convention: `*.test.*` files and their `*.test.<role>.*` companions, `testing/`
 * folders, the crash harness, the test build (`dist-test/`) and the older names (`*.suite.*`, `test-util.*`).
 */
const TEST_CODE = /(^|\/)(dist-test|crash)\/|\.test\.|\.suite\.|(^|\/)test-util\./;
const TESTING_DIR = /(^|\/)testing\//;

/** The paths `npm pack` would put in the package's tarball. */
function packedFiles(pkgDir) {
  const [report] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: pkgDir }),
  );
  return report.files.map((f) => f.path);
}

/**
 * Folders a subpath export deliberately publishes: `@vlink/bag-core/testing` is the conformance kit third-party
 * backends run (dist/testing), so its folder is product there, not test code.
 */
function publishedDirs(pkg) {
  return Object.entries(pkg.exports)
    .filter(([entry]) => entry.endsWith('/testing'))
    .map(([, target]) => target.default.replace(/^\.\//, '').replace(/[^/]*$/, ''));
}

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
  await check(`${pkg.name}: the tarball holds no test code`, () => {
    const listed = packedFiles(pkgDir);
    if (!listed.some((f) => f.startsWith('dist/'))) throw new Error('nothing from dist is packed: build first');
    const published = publishedDirs(pkg);
    const tests = listed.filter(
      (f) => TEST_CODE.test(f) || (TESTING_DIR.test(f) && !published.some((dir) => f.startsWith(dir))),
    );
    if (tests.length) throw new Error(`test code in the tarball: ${tests.slice(0, 5).join(', ')}`);
  });
}

// Engines. Every package declares the root's ranges; every runtime dependency's own `engines.node` must contain our
// whole Node range (so `npm ci` never warns EBADENGINE for a supported Node), and the suite must run on the floor of
// each runtime: Node is whatever runs this script (it must satisfy the range), Bun and Deno are the versions the lock
// file installs (they must be the declared minimums, so the floor is what the tests exercise).
const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
// Optional dependencies load only on some Nodes: better-sqlite3 only where node:sqlite is missing or behind a flag
// (before 22.13 and 23.4; 23.0-23.3 are past end of life, so the bound is the later one). Node 21 has neither, which
// is why our range skips it.
const LOADED_BELOW = { 'better-sqlite3': '23.4.0' };
/**
 * Whether every version in `range` is in `theirs`. `semver.subset` misses a piece that spans two alternatives
 * (`>=22 <23.4` of `22.x || 23.x`), so the range is cut major by major first.
 */
const coveredBy = (range, theirs) => {
  for (let major = 0; major <= 99; major++) {
    const slice = `${major}.x`;
    if (!semver.intersects(range, slice)) continue;
    const piece = new semver.Range(range).set
      .map((set) => [...set.map((c) => c.value), `>=${major}.0.0`, `<${major + 1}.0.0-0`].join(' '))
      .filter((alt) => semver.validRange(alt) && semver.intersects(alt, slice))
      .join(' || ');
    if (!semver.subset(piece, theirs)) return false;
  }
  return true;
};
/** `range` cut at `<below`, alternative by alternative. */
const below = (range, version) =>
  new semver.Range(range).set.map((set) => [...set.map((c) => c.value), `<${version}`].join(' ')).join(' || ');
await check('engines: every public package declares the root ranges', () => {
  for (const dir of PUBLIC) {
    const pkg = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'));
    const want = JSON.stringify(rootPkg.engines);
    if (JSON.stringify(pkg.engines) !== want)
      throw new Error(`${pkg.name} engines ${JSON.stringify(pkg.engines)}, root ${want}`);
  }
});
await check('engines: every dependency supports our whole Node range, and the Node running this one', () => {
  const ours = rootPkg.engines.node;
  const bad = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const theirs = entry.engines?.node;
    if (!path || !theirs || typeof theirs !== 'string') continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (!semver.satisfies(process.version, theirs)) bad.push(`${name} needs ${theirs}, this is ${process.version}`);
    if (entry.dev) continue; // dev tools run only here, on the Node just checked
    const range = LOADED_BELOW[name] ? below(ours, LOADED_BELOW[name]) : ours;
    if (!coveredBy(range, theirs)) bad.push(`${name} supports ${theirs}, not all of ${range}`);
  }
  if (!semver.satisfies(process.version, ours)) bad.push(`this Node ${process.version} is outside ${ours}`);
  if (bad.length) throw new Error(bad.join('; '));
});
await check('engines: the Bun and Deno the suite runs are the declared minimums', () => {
  for (const runtime of ['bun', 'deno']) {
    const installed = lock.packages[`node_modules/${runtime}`]?.version;
    const floor = semver.minVersion(rootPkg.engines[runtime])?.version;
    if (installed !== floor)
      throw new Error(`${runtime}: the lock installs ${installed}, engines say ${rootPkg.engines[runtime]}`);
    const bin = join(root, 'node_modules', '.bin', runtime);
    const printed = execFileSync(bin, ['--version'], { encoding: 'utf8' });
    if (!printed.includes(floor)) throw new Error(`${runtime} --version printed ${printed.trim()}, expected ${floor}`);
  }
});

// Every export of every public package is in its API report (scripts/api-report.mjs), so an export that changes is
// a reviewed diff of packages/<dir>/api-report.md.
await check('the exports match the API reports', () =>
  execFileSync('node', [join(root, 'scripts', 'api-report.mjs'), '--check'], { cwd: root, stdio: 'pipe' }),
);

// READMEs quote benchmark figures only through blocks generated from the last report (bench/report.mjs).
await check('README benchmark figures are those of the last report', () =>
  execFileSync('node', [join(root, 'bench', 'report.mjs'), '--check'], { cwd: root, stdio: 'pipe' }),
);

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
