import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { McapWriter } from '@mcap/core';
import { fixturePath } from '@vlink/fixtures';
import { after, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { runCli, SLOW, tempDir } from './testing/harness.js';

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;

// `check --decode`: payloads their schemas do not describe are problems, urls without a schema are listed apart.
const tmp = tempDir();
after(() => tmp.cleanup());

/** A CDR `std_msgs/msg/String`: encapsulation header, length with the NUL, the text, padding to 4 bytes. */
function cdrString(text: string): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  const out = new Uint8Array(Math.ceil((8 + bytes.length + 1) / 4) * 4);
  out.set([0, 1, 0, 0]);
  new DataView(out.buffer).setUint32(4, bytes.length + 1, true);
  out.set(bytes, 8);
  return out;
}

/**
 * An MCAP written by the official library, as a rosbag2 storage would be: /chatter's schema describes its payloads,
 * /rosout's says `uint8 level` of payloads that are strings (a definition that is not the payloads'), /raw has none.
 */
async function writeMcap(path: string): Promise<void> {
  const chunks: Uint8Array[] = [];
  let size = 0n;
  const writer = new McapWriter({
    writable: {
      position: () => size,
      write: async (buffer: Uint8Array) => {
        chunks.push(buffer.slice());
        size += BigInt(buffer.byteLength);
      },
    },
  });
  await writer.start({ profile: 'ros2', library: 'check-decode test' });
  const schema = async (name: string, text: string) =>
    writer.registerSchema({ name, encoding: 'ros2msg', data: new TextEncoder().encode(text) });
  const channel = async (topic: string, schemaId: number) =>
    writer.registerChannel({ topic, messageEncoding: 'cdr', schemaId, metadata: new Map() });
  const chatter = await channel('/chatter', await schema('std_msgs/msg/String', 'string data'));
  const rosout = await channel('/rosout', await schema('rcl_interfaces/msg/Log', 'uint8 level'));
  const raw = await channel('/raw', 0);
  for (let i = 0; i < 3; i++) {
    for (const [channelId, text] of [
      [chatter, `hello ${i}`],
      [rosout, `a log line that is not one byte ${i}`],
      [raw, `no schema ${i}`],
    ] as const) {
      const time = BigInt(1_700_000_000 + i) * 1_000_000_000n + BigInt(channelId);
      await writer.addMessage({ channelId, sequence: i, logTime: time, publishTime: time, data: cdrString(text) });
    }
  }
  await writer.end();
  writeFileSync(path, Buffer.concat(chunks));
}

describe('vlink-bag check --decode', () => {
  test(
    'payloads their schema does not describe fail the check; urls without a schema are said apart',
    SLOW,
    async () => {
      const path = tmp.path('mismatch.mcap');
      await writeMcap(path);
      const plain = await runCli(['check', path]);
      assert.equal(plain.code, 0, 'the bytes are the ones written: the plain check passes');
      const text = await runCli(['check', '--decode', path]);
      assert.equal(text.code, 1);
      assert.match(
        text.stdout,
        /url \/rosout: at 0\.\d+ s: 3 of 3 payloads do not decode; the first: cdr decode of rcl_interfaces\/msg\/Log failed: the definition of rcl_interfaces\/msg\/Log describes 5 of its 44 bytes/,
      );
      assert.match(text.stdout, /^\/raw: 3 payloads not decoded: /m);
      assert.doesNotMatch(text.stdout, /chatter/);
      assert.match(
        text.stderr,
        /check failed: 1 problem \(listed above\); the bag holds payloads its schemas do not describe/,
      );
      const json = await runCli(['check', '--decode', '--json', path]);
      assert.equal(json.code, 1);
      const report = JSON.parse(json.stdout) as {
        ok: boolean;
        problems: Array<{ url: string; timeUs: number }>;
        notDecoded: Array<{ url: string; frames: number }>;
      };
      const valid = new Ajv2020({ allErrors: true, strict: false }).compile(JSON_SCHEMAS['check']!);
      assert.ok(valid(report), JSON.stringify(valid.errors));
      assert.equal(report.ok, false);
      assert.deepEqual(
        report.problems.map((p) => [p.url, p.timeUs < 1000]),
        [['/rosout', true]],
        'one problem for the url, at its first payload',
      );
      assert.deepEqual(
        report.notDecoded.map((n) => [n.url, n.frames]),
        [['/raw', 3]],
      );
      const quick = await runCli(['check', '--decode', '--quick', path]);
      assert.notEqual(quick.code, 0);
      assert.match(quick.stderr, /'--quick' cannot be used with option '--decode'/);
    },
  );

  test('a bag whose schemas describe every payload passes, and says it decoded them', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['check', '--decode', fixturePath('foreign', 'ros2', 'mcap')]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /: ok \(91 frames checked and decoded\)$/m);
  });
});
