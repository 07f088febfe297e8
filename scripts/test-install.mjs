#!/usr/bin/env node
// Packs every public package and installs the tarballs into fresh temporary projects three ways — npm on Node,
// `bun add` on Bun, and Deno over an npm-installed node_modules — then runs the same example and `vlink-bag info`.
// No workspace links can leak in: the projects live outside the repo and only see the tarballs and the registry.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PUBLIC } from './public-packages.mjs';

const root = resolve(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const work = mkdtempSync(join(tmpdir(), 'vlink-install-'));
let passed = 0;
let failed = 0;

function run(cmd, args, cwd, extraEnv = {}) {
  return execFileSync(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, ...extraEnv },
    timeout: 600_000,
  });
}

function step(name, fn) {
  const started = performance.now();
  try {
    fn();
    console.log(`ok - ${name} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    passed++;
  } catch (error) {
    console.log(`not ok - ${name}\n${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`);
    failed++;
  }
}

const packs = join(work, 'packs');
mkdirSync(packs);
const tarballs = {};
for (const dir of PUBLIC) {
  const out = run('npm', ['pack', '--silent', '--pack-destination', packs], join(root, 'packages', dir))
    .trim()
    .split('\n')
    .pop();
  const name = JSON.parse(
    run('node', ['-p', 'JSON.stringify(require("./package.json").name)'], join(root, 'packages', dir)),
  );
  tarballs[name] = join(packs, out);
}
// Our packages depend on each other by version; overrides make every copy resolve to the tarballs, not the registry.
const manifest = (deps) =>
  JSON.stringify(
    { name: 'vlink-install-test', private: true, type: 'module', dependencies: deps, overrides: deps },
    null,
    2,
  );
const fileDeps = Object.fromEntries(Object.entries(tarballs).map(([n, t]) => [n, `file:${t}`]));

function project(name) {
  const dir = join(work, name);
  mkdirSync(dir);
  copyFileSync(join(import.meta.dirname, 'install-test', 'example.mjs'), join(dir, 'example.mjs'));
  return dir;
}

/**
 * better-sqlite3 is an optional dependency (Node 20 has no node:sqlite; it builds from source here, as its prebuilt
 * binaries come from GitHub), and npm drops an optional dependency whose build failed without a word, so the example
 * would fail later with DRIVER_MISSING and no reason. When it is missing, this builds it again in the open and fails
 * with the build's own output and the free disk space, or says that the second build worked.
 */
function explainMissingSqlite(dir) {
  if (existsSync(join(dir, 'node_modules', 'better-sqlite3'))) return;
  if (run('node', ['-p', 'Number(process.versions.node.split(".")[0]) >= 22'], dir).trim() === 'true') return;
  const range = JSON.parse(readFileSync(join(root, 'packages', 'backend-sqlite', 'package.json'), 'utf8'))
    .optionalDependencies['better-sqlite3'];
  const fs = statfsSync(dir);
  const free = `${((fs.bavail * fs.bsize) / 1024 ** 3).toFixed(1)} GiB free in ${dir}`;
  try {
    run(
      'npm',
      ['install', '--no-save', '--foreground-scripts', '--no-audit', '--no-fund', `better-sqlite3@${range}`],
      dir,
    );
  } catch (error) {
    throw new Error(
      `npm dropped the optional dependency better-sqlite3 (its build failed; ${free}); building it again:\n` +
        `${String(error.stdout ?? '').slice(-4000)}${String(error.stderr ?? '').slice(-4000)}`,
    );
  }
  console.log(`note: npm dropped better-sqlite3 (its build failed; ${free}); a second build worked`);
}

/**
 * The better-sqlite3 binary `npm ci` built for this repository, offered to the installs below as a local prebuild
 * (prebuild-install's own `npm_config_<package>_local_prebuilds` folder, looked up before any download): the
 * projects' installs then unpack it instead of compiling SQLite again (a fresh clone's CI run on 2 cores: npm install
 * 167 → 79 s, `bun add` 98 → 4 s; by hand, the npm install alone 136 → 66 s). prebuild-install loads the binary before
 * it accepts it, and the tarball's name carries the version and Node ABI, so another version or Node still builds
 * from source. The build from source itself was what `npm ci` of the repository just did;
 * VLINK_INSTALL_FROM_SOURCE=1 makes the installs build it again too.
 */
function localPrebuilds() {
  const dir = join(root, 'node_modules', 'better-sqlite3');
  const binary = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (process.env.VLINK_INSTALL_FROM_SOURCE === '1' || !existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const prebuilds = join(work, 'prebuilds');
  mkdirSync(prebuilds);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run('tar', ['-czf', join(prebuilds, name), '-C', dir, 'build/Release/better_sqlite3.node'], root);
  console.log(`note: installs reuse the better-sqlite3 ${version} binary npm ci built (${name})`);
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds };
}
const prebuildEnv = localPrebuilds();

const npmDir = project('npm-node');
step('npm install of the tarballs (Node)', () => {
  writeFileSync(join(npmDir, 'package.json'), manifest(fileDeps));
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], npmDir, prebuildEnv);
  const linked = readdirSync(join(npmDir, 'node_modules', '@vlink'));
  if (linked.length !== PUBLIC.length) throw new Error(`expected ${PUBLIC.length} @vlink packages, got ${linked}`);
  explainMissingSqlite(npmDir);
});
step('example on Node', () => process.stdout.write(run('node', ['example.mjs'], npmDir)));
step('npx vlink-bag info (Node)', () => {
  const out = run('npx', ['--no-install', 'vlink-bag', 'info', 'example.vdb', '--json'], npmDir);
  if (JSON.parse(out).messageCount !== 1000) throw new Error(out);
});

// Deno runs over the node_modules npm just installed (the project above; a folder of its own inside it, so the example
// writes fresh files), not a second npm install of the same tarballs: that spent 140 s building better-sqlite3 again.
const denoDir = join(npmDir, 'deno');
step('example on Deno over the npm-installed node_modules', () => {
  mkdirSync(denoDir);
  copyFileSync(join(import.meta.dirname, 'install-test', 'example.mjs'), join(denoDir, 'example.mjs'));
  process.stdout.write(run(bin('deno'), ['run', '-A', '--node-modules-dir=manual', 'example.mjs'], denoDir));
});

const bunDir = project('bun');
step('bun add of the tarballs and the example on Bun', () => {
  writeFileSync(
    join(bunDir, 'package.json'),
    JSON.stringify({ name: 'vlink-install-bun', private: true, type: 'module', overrides: fileDeps }, null, 2),
  );
  run(bin('bun'), ['add', ...Object.values(tarballs)], bunDir, prebuildEnv);
  process.stdout.write(run(bin('bun'), ['example.mjs'], bunDir));
  const out = run(bin('bun'), ['x', '--bun', 'vlink-bag', 'info', 'example.vcap', '--json'], bunDir);
  if (JSON.parse(out).messageCount !== 1000) throw new Error(out);
});

if (failed === 0) rmSync(work, { recursive: true, force: true });
else console.log(`kept ${work} for inspection`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
