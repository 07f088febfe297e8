// StrykerJS over the modules where a bug loses or corrupts data or opens a hole (issue #28). One module group per
// run, chosen by VLINK_MUTATE (scripts/mutation.mjs runs them one after another and writes the report):
// the TypeScript sources are mutated in a sandbox, compiled by the package's test build (buildCommand:
// tsconfig.test.json, the product and its tests into dist-test), type-checked per mutant (the TypeScript checker
// discards mutants that would not compile), and each mutant runs only the compiled test files that reached it (the
// tap runner runs a node:test file per process and reads its TAP).
import { groups } from './scripts/mutation/groups.mjs';

const name = process.env.VLINK_MUTATE;
const group = groups[name];
if (!group) throw new Error(`VLINK_MUTATE must name a module group: ${Object.keys(groups).join(', ')}`);

export default {
  packageManager: 'npm',
  mutate: group.mutate,
  buildCommand: `npx tsc -p packages/${group.pkg}/tsconfig.test.json`,
  checkers: ['typescript'],
  tsconfigFile: `packages/${group.pkg}/tsconfig.test.json`,
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  testRunner: 'tap',
  tap: { testFiles: group.tests, forceBail: true },
  coverageAnalysis: 'perTest',
  // The machine has 2 cores shared with other work.
  concurrency: Number(process.env.VLINK_MUTATE_CONCURRENCY ?? 2),
  timeoutMS: 20_000,
  // Only what the build and the tests read: the sandbox copy stays small.
  ignorePatterns: [
    '/apps',
    '/bench',
    '/clients',
    '/examples',
    '/coverage',
    '/reports',
    '/.stryker-tmp*',
    '**/dist',
    '**/dist-test',
    '**/*.tsbuildinfo',
  ],
  reporters: ['clear-text', 'json', 'progress'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  // One sandbox folder per group, so two groups may run side by side.
  tempDirName: `.stryker-tmp-${name}`,
  cleanTempDir: 'always',
};
