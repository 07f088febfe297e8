import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { serve, type RunningServer } from './index.js';
import { buildFixtureRoot, type FixtureRoot } from './testing/fixtures.js';

// The OpenAPI document is the contract clients (the web player, the Python client, generated clients) are written
// against: every JSON answer must match its declared schema, with no field the document does not declare (a field
// added to core's Info but not to the schema is invisible to those clients) and every required field present.
let fx: FixtureRoot;
let server: RunningServer;
let validate: (path: string, status: number, body: unknown) => string[];

/** Objects that declare properties get `additionalProperties: false` unless they say otherwise: undeclared = drift. */
function closeObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) closeObjects(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.properties !== undefined && schema.additionalProperties === undefined) schema.additionalProperties = false;
  for (const value of Object.values(schema)) closeObjects(value);
}

before(async () => {
  fx = await buildFixtureRoot();
  // A foreign file with metadata and attachments, which add optional Info fields.
  copyFileSync(fixturePath('foreign', 'mcap', 'json.mcap'), join(fx.root, 'json.mcap'));
  server = await serve({ root: fx.root, port: 0 });
  const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as {
    components: { schemas: Record<string, unknown> };
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
    >;
  };
  closeObjects(doc.components.schemas);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'doc', components: doc.components });
  validate = (template, status, body) => {
    const content = doc.paths[template]?.get?.responses[String(status)]?.content?.['application/json'];
    assert.ok(content, `the document declares a JSON ${status} answer for GET ${template}`);
    const schema = JSON.parse(JSON.stringify(content.schema).replaceAll('"#/components', '"doc#/components'));
    closeObjects(schema);
    const check = ajv.compile(schema);
    return check(body)
      ? []
      : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  };
});
after(async () => {
  await server?.close();
  fx?.cleanup();
});

const answers: Array<[template: string, path: string]> = [
  ['/v1/health', '/v1/health'],
  ['/v1/bags', '/v1/bags'],
];
for (const id of ['drive.vdb', 'runs/drive.vcap', 'proto.vdb', 'json.mcap']) {
  const bag = `/v1/bags/${encodeURIComponent(id)}`;
  answers.push(
    ['/v1/bags/{id}/info', `${bag}/info`],
    ['/v1/bags/{id}/schemas', `${bag}/schemas`],
    ['/v1/bags/{id}/timing', `${bag}/timing`],
    ['/v1/bags/{id}/report', `${bag}/report`],
    ['/v1/bags/{id}/density', `${bag}/density?buckets=16`],
    ['/v1/bags/{id}/messages', `${bag}/messages?format=json&limit=5`],
    ['/v1/bags/{id}/messages', `${bag}/messages?format=json&limit=5&decode=true`],
  );
}
answers.push(['/v1/bags/{id}/info', '/v1/bags/no-such.vdb/info']);

describe('every JSON answer matches the OpenAPI document', () => {
  for (const [template, path] of answers)
    test(`GET ${path}`, async () => {
      const res = await fetch(server.url + path);
      const body = (await res.json()) as unknown;
      assert.deepEqual(
        validate(template, res.status, body),
        [],
        `${path} → ${res.status} ${JSON.stringify(body).slice(0, 300)}`,
      );
    });
});
