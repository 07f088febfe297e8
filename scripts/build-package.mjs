#!/usr/bin/env node
// Builds the package in the current folder (each package's `build` script runs this): its product into `dist/`
// (what `npm pack` publishes) and product and tests into `dist-test/` (what the suites run), from one TypeScript
// compilation. `tsconfig.test.json` compiles everything under `src/` into `dist-test/`; the files of the product's
// program (`tsconfig.json`, which leaves the tests out) are then copied from there into `dist/`. Both configurations
// have the same compiler options and `rootDir`, so each file's output (its source maps' relative paths included) is
// the same bytes in either folder. A second compilation of the product alone took about half of every package's
// build (core: 6.8 s of 14.6), on the chain of builds that `npm test` waits for.
//
//   npm run build -w <package>      (each package's build script runs this script from the package's folder)
//
// Starts by removing `dist/` and `dist-test/`, so a file deleted or moved in `src` cannot live on in `dist` and be
// packed. Fails when a copied module imports a relative path that is not in `dist/`: a product file that imports a
// test helper (which `tsconfig.json` leaves out) would otherwise publish a broken import.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const pkg = process.cwd();
const DIST = join(pkg, 'dist');
const DIST_TEST = join(pkg, 'dist-test');
/** What tsc writes for each source file with the base configuration (declaration, declarationMap, sourceMap on). */
const OUTPUTS = ['.js', '.js.map', '.d.ts', '.d.ts.map'];

for (const dir of [DIST, DIST_TEST]) rmSync(dir, { recursive: true, force: true });

const tsc = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.test.json'],
  {
    cwd: pkg,
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const product = productSources(join(pkg, 'tsconfig.json'));
const copied = [];
for (const source of product) {
  const stem = relative(join(pkg, 'src'), source).replace(/\.ts$/, '');
  for (const ext of OUTPUTS) {
    const from = join(DIST_TEST, stem + ext);
    if (!existsSync(from)) {
      if (ext === '.js') fail(`tsc wrote no ${relative(pkg, from)} for ${relative(pkg, source)}`);
      continue;
    }
    const to = join(DIST, stem + ext);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
    if (ext === '.js') copied.push(to);
  }
}
checkRelativeImports(copied);

/** The `.ts` sources of the product's program: the root files `tsconfig.json` names (its include minus exclude). */
function productSources(configPath) {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) =>
        fail(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')),
    },
  );
  if (!parsed) fail(`cannot read ${configPath}`);
  if (parsed.errors.length > 0)
    fail(parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'));
  return parsed.fileNames.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
}

/** Every relative `import`/`export … from`/`import()` of the copied modules must name a module that is in `dist/`. */
function checkRelativeImports(files) {
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;
  const broken = [];
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(specifier)) {
      const target = resolve(dirname(file), match[2]);
      if (!existsSync(target)) broken.push(`${relative(pkg, file)} imports ${match[2]}`);
    }
  }
  if (broken.length > 0)
    fail(`the product imports modules that tsconfig.json leaves out (test code?):\n  ${broken.join('\n  ')}`);
}

function fail(message) {
  console.error(`build-package (${relative(root, pkg)}): ${message}`);
  process.exit(1);
}
