import assert from 'node:assert/strict';
import { truncateSync } from 'node:fs';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { runCli, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

// What `fix` says it lost, as text and as JSON, when a .vdb was cut through its url table: every frame and the url's
// name are gone, and the report said "nothing lost" with exit 0 before the loss was counted from the header.

const { tmp } = sampleBags();
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const validateFix = new Ajv2020({ allErrors: true, strict: false }).compile(JSON_SCHEMAS['fix']!);

async function cutBag(name: string): Promise<string> {
  const path = tmp.path(name);
  const writer = await BagWriter.create(path, { syncMode: true, summary: false });
  for (let i = 0; i < 300; i++)
    writer.push({
      timestamp: i * 1000,
      url: '/s',
      data: new Uint8Array(64).fill(i & 0xff),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
  truncateSync(path, 40_000);
  return path;
}

describe('fix: what a cut .vdb lost', () => {
  test('--json: every frame lost, the url name in lostMetadata, not lossless, exit 1', SLOW, async () => {
    const cut = await cutBag('json.vdb');
    const { code, stdout } = await runCli(['fix', cut, '--output', tmp.path('json-fixed.vdb'), '--json']);
    const report = JSON.parse(stdout) as { lostFrames: number; lossless: boolean; lostMetadata: string[] };
    assert.ok(validateFix(report), JSON.stringify(validateFix.errors));
    assert.equal(report.lostFrames, 300);
    assert.equal(report.lossless, false);
    assert.ok(report.lostMetadata.length > 0, 'the url name is reported lost');
    assert.equal(code, 1);
  });

  test('text: the frames of urls the file no longer names and each piece of lost bookkeeping', SLOW, async () => {
    const cut = await cutBag('text.vdb');
    const { code, stdout } = await runCli(['fix', cut, '--output', tmp.path('text-fixed.vdb')]);
    assert.match(stdout, /300 frames and .* lost/);
    assert.match(stdout, /\n {2}300 frames lost of urls the file no longer names\n/);
    assert.match(stdout, /\n {2}lost: /);
    assert.equal(code, 1);
  });
});
