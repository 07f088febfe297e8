import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { runCli, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

// `check --json` and `fix --json` of a bag that does not even open printed nothing on stdout (only a stderr line),
// while a bag that opens and fails its check got a report: a script must get its verdict either way.

const { tmp, vdb } = sampleBags();

// ajv ships CommonJS: under some runtimes the class is the default export's `default`.
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });

function validate(verb: string, value: unknown): void {
  const check = ajv.compile(JSON_SCHEMAS[verb]!);
  assert.ok(check(value), `${verb}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
}

interface Problem {
  file: string;
  message: string;
}

describe('--json when the bag cannot be opened', () => {
  test('check --json of a truncated .vdb: a report, not ok, the file and reason as its problem', SLOW, async () => {
    const cut = tmp.path('cut.vdb');
    copyFileSync(vdb, cut);
    truncateSync(cut, 20_000);
    const { code, stdout, stderr } = await runCli(['check', cut, '--json']);
    assert.equal(code, 1);
    assert.match(stderr, /cut\.vdb: /, 'the error line on stderr stays');
    const report = JSON.parse(stdout) as { ok: boolean; frames: number; problems: Problem[] };
    validate('check', report);
    assert.equal(report.ok, false);
    assert.equal(report.frames, 0);
    assert.equal(report.problems.length, 1);
    assert.equal(report.problems[0]!.file, cut);
    assert.match(report.problems[0]!.message, /malformed|cannot read/);
  });

  test('check --json of a .vcapx with a missing segment names that segment', SLOW, async () => {
    const dir = tmp.path('split');
    mkdirSync(dir);
    const manifest = join(dir, 's.vcapx');
    const clone = await runCli(['clone', vdb, manifest, '-y', '0.5', '-q']);
    assert.equal(clone.code, 0, clone.stderr);
    const segments = readdirSync(dir)
      .filter((name) => /^s\.\d+\.vcap$/.test(name))
      .sort();
    assert.ok(segments.length > 2, segments.join(' '));
    const missing = segments[1]!;
    rmSync(join(dir, missing));
    const { code, stdout } = await runCli(['check', manifest, '--json']);
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as { ok: boolean; path: string; problems: Problem[] };
    validate('check', report);
    assert.equal(report.ok, false);
    assert.equal(report.path, manifest);
    assert.ok(report.problems[0]!.file.endsWith(missing), report.problems[0]!.file);
  });

  test('fix --json of a .vdb with nothing to rebuild from: not ok, nothing rewritten, the reason', SLOW, async () => {
    const zeros = tmp.path('zeros.vdb');
    writeFileSync(zeros, new Uint8Array(4096));
    const { code, stdout } = await runCli(['fix', zeros, '--json', '--yes']);
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as { ok: boolean; rewritten: boolean; problems: Problem[] };
    validate('fix', report);
    assert.deepEqual([report.ok, report.rewritten], [false, false]);
    assert.equal(report.problems[0]!.file, zeros);
    assert.ok(report.problems[0]!.message.length > 0);
  });

  test('a usage error is no verdict: no document, exit 2', SLOW, async () => {
    const { code, stdout } = await runCli(['fix', vdb, '--json', '-y']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
  });
});
