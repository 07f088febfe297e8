import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, BagReader, BagWriter, SchemaType, summarizeBag } from '@vlink/bag';
import { createProgram } from './program.js';
import { runCli, START_MS, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

const { tmp, vdb, vcap } = sampleBags();

describe('vlink-bag info', () => {
  test('prints the VLink summary and the per-url table', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['info', vdb]);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    for (const label of [
      'File Name:',
      'File Size:',
      'Tag Name:',
      'Version:',
      'Storage Type:',
      'Compression:',
      'Meta Flags:',
      'Date Time:',
      'Duration:',
      'Message Count:',
      'Split Count:',
      'Meta List:',
    ]) {
      assert.match(stdout, new RegExp(`^${label}`, 'm'), label);
    }
    assert.match(stdout, /^Tag Name: +fixture$/m);
    assert.match(stdout, /^Storage Type: +SQLite3 \(vdb\)$/m);
    assert.match(stdout, /^Meta Flags: +completed \| schema$/m);
    assert.match(stdout, /^Duration: +00:00:00:020 ~ 00:00:02:010$/m, 'blank ~ total');
    assert.match(stdout, /^Message Count: +200$/m);
    assert.match(stdout, /\[Type\] +\[Count\] +\[Size\] +\[Freq\] +\[Loss\] +\[Url\] +\[Ser\]/);
    assert.match(stdout, /Event +34 +.*\/camera +test\.Point$/m);
    assert.match(stdout, /Method +.*\/rpc +test\.Req\|test\.Resp$/m);
  });

  test('a .vcap lists a url once per action', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['info', vcap]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Storage Type: +vcap \(vcap\)$/m);
    assert.match(stdout, /\[Action\]/);
    assert.match(stdout, /Method +C\/Req +.*\/rpc/);
    assert.match(stdout, /Method +C\/Resp +.*\/rpc/);
  });

  test('--json prints the summary document: BagReader.getInfo() plus streams, counters and errors', SLOW, async () => {
    for (const path of [vdb, vcap]) {
      const { code, stdout, stderr } = await runCli(['info', path, '--json']);
      assert.equal(code, 0, stderr);
      const reader = await BagReader.create(path);
      try {
        const { semantics, recording, streams, counters, errors, ...info } = JSON.parse(stdout);
        assert.deepEqual(info, JSON.parse(JSON.stringify(reader.getInfo())));
        assert.deepEqual(JSON.parse(stdout), JSON.parse(JSON.stringify(await summarizeBag(reader))));
        assert.equal(semantics, 1);
        assert.equal(recording.end, 'clean');
        assert.deepEqual([counters, errors], [{}, []]);
        assert.equal(
          streams.reduce((n: number, s: { count: number }) => n + s.count, 0),
          200,
        );
      } finally {
        reader.close();
      }
    }
  });

  test('-l lists every frame: time, url, action, size', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['info', '-l', vdb]);
    assert.equal(code, 0, stderr);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 200);
    assert.match(lines[0]!, /^0\.020000s +\/camera +Pub +\d+B$/);
    assert.match(lines[3]!, /^0\.050000s +\/lidar +Sub +256\.00KB$/);
    assert.match(lines[4]!, /\/rpc +C\/Req/);
  });

  test('--gaps adds the timing analysis (text and JSON)', SLOW, async () => {
    const text = await runCli(['info', vdb, '--gaps']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Timing \(gaps > 1.5 × median interval\):$/m);
    assert.match(text.stdout, /\/imu +Pub +34 +16\.\d\dHz +60\.000ms/);
    const json = await runCli(['info', vdb, '--json', '--gaps=2']);
    const parsed = JSON.parse(json.stdout) as {
      messageCount: number;
      timing: { factor: number; urls: Array<{ url: string; action: string; count: number; gaps: unknown[] }> };
    };
    assert.equal(parsed.messageCount, 200);
    assert.equal(parsed.timing.factor, 2);
    // One stream per url and action: /rpc's requests and responses are timed apart.
    assert.deepEqual(
      parsed.timing.urls.map((u) => `${u.url} ${u.action}`),
      ['/camera Pub', '/config Get', '/config Set', '/imu Pub', '/lidar Sub', '/log Pub', '/rpc C/Req', '/rpc C/Resp'],
    );
    assert.ok(parsed.timing.urls.every((u) => u.gaps.length === 0));
  });

  test('counters by cause: text table and --json', SLOW, async () => {
    const path = tmp.path('counted.vcap');
    const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: START_MS });
    const data = new Uint8Array([1, 2, 3]);
    writer.push({
      timestamp: 0,
      url: '/act',
      data,
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
    writer.count('/act', 'submitFailed', 2);
    writer.count('/cam', 'missedSlot');
    await writer.close();
    const text = await runCli(['info', path]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Counters: +\[Count\] +\[Cause\] +\[Url\]$/m);
    assert.match(text.stdout, /^ +2 +submitFailed +\/act$/m);
    assert.match(text.stdout, /^ +1 +missedSlot +\/cam$/m);
    const json = JSON.parse((await runCli(['info', path, '--json'])).stdout) as { counters: unknown };
    assert.deepEqual(json.counters, { '/act': { submitFailed: 2 }, '/cam': { missedSlot: 1 } });
  });

  test("the recording start and timezone are the bag's", SLOW, async () => {
    const { stdout } = await runCli(['info', vdb, '--json']);
    assert.equal((JSON.parse(stdout) as { startTimestamp: number }).startTimestamp, START_MS);
  });
});

describe('errors are one line naming the file, without a stack trace', () => {
  const noStack = (stderr: string) => {
    assert.equal(stderr.trimEnd().split('\n').length, 1, `one line: ${stderr}`);
    assert.doesNotMatch(stderr, /\n\s+at |Error:/);
  };

  test('missing file', SLOW, async () => {
    const missing = tmp.path('nope.vdb');
    const { code, stdout, stderr } = await runCli(['info', missing]);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr, `vlink-bag info: ${missing}: no such file\n`);
  });

  test('unsupported extension', SLOW, async () => {
    const notes = tmp.path('notes.txt');
    writeFileSync(notes, 'hello');
    const { code, stderr } = await runCli(['cat', notes]);
    assert.equal(code, 1);
    assert.match(
      stderr,
      new RegExp(
        `^vlink-bag cat: ${notes.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: unsupported bag extension "\\.txt" \\(supported: .*\\.vcap.*\\.vdb.*\\)\n$`,
      ),
    );
    noStack(stderr);
  });

  test('a directory and a corrupt file', SLOW, async () => {
    const dir = tmp.path('dir.vdb');
    mkdirSync(dir);
    const isDir = await runCli(['info', dir]);
    assert.equal(isDir.code, 1);
    assert.match(isDir.stderr, /dir\.vdb: is a directory/);
    const bad = tmp.path('bad.vdb');
    writeFileSync(bad, 'not a database '.repeat(300));
    const corrupt = await runCli(['info', bad]);
    assert.equal(corrupt.code, 1);
    assert.match(corrupt.stderr, /^vlink-bag info: .*bad\.vdb: /);
    noStack(corrupt.stderr);
    const verbose = await runCli(['info', bad, '--verbose']);
    assert.match(verbose.stderr, /\n\s+at /, '--verbose adds the stack');
  });

  test('bad flag values exit 2 with the flag and the reason', SLOW, async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['play', vdb, '-r', '500'],
        /^vlink-bag play: option '-r, --rate <x>' argument '500' is invalid\. must be between 0\.01 and 100$/,
      ],
      [['play', vdb, '-r', 'fast'], /argument 'fast' is invalid\. not a number/],
      [['cat', vdb, '-b', '-1'], /option '-b, --begin <time>' argument '-1' is invalid/],
      [['cat', vdb, '--format', 'xml'], /argument 'xml' is invalid\. Allowed choices are ndjson, csv, text/],
      [
        ['cat', vdb, '-b', '1.5', '-e', '1'],
        /^vlink-bag cat: Invalid time: -e\/--end \(1 s\) is before the window start \(1\.5 s\)$/,
      ],
      [['clone', vdb, tmp.path('x.vdb'), '--compress=gzip'], /must be one of none, auto, zstd, lzav/],
      [['info'], /missing required argument 'path'/],
      [['frobnicate'], /unknown command 'frobnicate'/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach(({ code, stderr }, i) => {
      const [args, pattern] = cases[i]!;
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      assert.match(stderr.trimEnd(), pattern);
      noStack(stderr);
    });
  });
});

describe('help', () => {
  /** A verb's full `--help` text as a pipe gets it (80 columns, no colour), rendered in-process. */
  function helpText(args: string[]): string {
    const program = createProgram();
    let out = '';
    for (const command of [program, ...program.commands]) {
      command.configureOutput({
        ...command.configureOutput(),
        writeOut: (text) => (out += text),
        getOutHelpWidth: () => 80,
        getOutHasColors: () => false,
      });
    }
    const command = args.length === 0 ? program : program.commands.find((c) => c.name() === args[0])!;
    command.outputHelp();
    return out;
  }

  test('--help exits 0 and prints the same text as the program renders', SLOW, async () => {
    const [top, play] = await Promise.all([runCli(['--help']), runCli(['play', '--help'])]);
    assert.deepEqual([top.code, top.stdout], [0, helpText([])], top.stderr);
    assert.deepEqual([play.code, play.stdout], [0, helpText(['play'])], play.stderr);
  });

  test('every verb has help with examples, and README.md shows the same text', SLOW, () => {
    const top = helpText([]);
    const verbs = [
      'info',
      'report',
      'cat',
      'record',
      'play',
      'clone',
      'merge',
      'check',
      'reindex',
      'fix',
      'tag',
      'serve',
      'split',
      'recover',
    ];
    for (const verb of verbs) assert.match(top, new RegExp(`^  ${verb} `, 'm'));
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const stale = 'README.md reference is stale: run `node scripts/gen-help.mjs` in packages/cli';
    assert.ok(readme.includes(`\`\`\`text\n${top.trimEnd()}\n\`\`\``), stale);
    for (const verb of verbs) {
      const text = helpText([verb]);
      assert.match(text, new RegExp(`^Usage: vlink-bag ${verb} `));
      assert.match(text, /\nExamples:\n {2}vlink-bag /);
      assert.ok(
        readme.includes(`### \`vlink-bag ${verb}\`\n\n\`\`\`text\n${text.trimEnd()}\n\`\`\``),
        `${verb}: ${stale}`,
      );
    }
  });
});
