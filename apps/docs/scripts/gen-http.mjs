// reference/http-api.md from the server's own OpenAPI document: createApp() in-process (no socket) over an empty
// temporary root, GET /openapi.json, rendered as markdown (endpoints, parameters, responses, schemas). The raw
// document is published next to the page as /openapi.json.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '@vlink/bag-server';
import { cell, fail, fromDocs, generatedBy, prose, table, writeIfChanged } from './lib.mjs';

const SCRIPT = 'gen-http.mjs';
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

export async function fetchOpenApi() {
  const root = mkdtempSync(join(tmpdir(), 'vlink-docs-openapi-'));
  const app = createApp({ root });
  try {
    const response = await app.fetch(new Request('http://127.0.0.1/openapi.json'));
    if (!response.ok) fail(SCRIPT, `GET /openapi.json answered ${response.status}: ${await response.text()}`);
    return await response.json();
  } finally {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const operationAnchor = (path, method, op) =>
  `${op['x-websocket'] ? 'ws' : method}-${path
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}`;
const refName = (ref) => ref.replace('#/components/schemas/', '');
const anchor = (name) => `schema-${name.toLowerCase()}`;

/** A short type text for a schema: `string`, `"a" \| "b"`, `Message[]`, links for `$ref`s. */
function typeOf(schema) {
  if (!schema) return '';
  if (schema.$ref) return `[${refName(schema.$ref)}](#${anchor(refName(schema.$ref))})`;
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  for (const key of ['oneOf', 'anyOf']) if (schema[key]) return schema[key].map(typeOf).join(' \\| ');
  if (schema.allOf) return schema.allOf.map(typeOf).join(' & ');
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? (schema.properties ? 'object' : 'any')];
  return types
    .map((type) => {
      if (type === 'array') return `${typeOf(schema.items) || 'any'}[]`;
      if (type === 'string' && schema.format) return `string (${schema.format})`;
      if (type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        return `{ [key]: ${typeOf(schema.additionalProperties)} }`;
      }
      return type;
    })
    .join(' \\| ');
}

function constraints(schema = {}) {
  const out = [];
  if (schema.pattern) out.push(`pattern \`${schema.pattern}\``);
  for (const key of ['minimum', 'maximum', 'minLength', 'maxLength'])
    if (schema[key] !== undefined) out.push(`${key} ${schema[key]}`);
  if (schema.default !== undefined) out.push(`default \`${JSON.stringify(schema.default)}\``);
  if (schema.example !== undefined) out.push(`e.g. \`${JSON.stringify(schema.example)}\``);
  return out.join(', ');
}

function renderOperation(path, method, op) {
  const ws = op['x-websocket'] === true;
  const lines = [`### ${ws ? 'WS' : method.toUpperCase()} \`${path}\` {#${operationAnchor(path, method, op)}}`, ''];
  if (op.summary) lines.push(prose(op.summary), '');
  if (op.description) lines.push(...op.description.split('\n').flatMap((p) => [prose(p), '']));
  if (ws)
    lines.push(
      '::: tip WebSocket',
      `Open \`ws://HOST:PORT${path}\` (the HTTP GET upgrades). Browsers cannot set headers: pass the token as \`?token=\`.`,
      ':::',
      '',
    );
  if (op.security?.length === 0) lines.push('No authentication.', '');
  const params = op.parameters ?? [];
  if (params.length > 0) {
    lines.push(
      '**Parameters**',
      '',
      table(
        ['Name', 'In', 'Type', 'Required', 'Description'],
        params.map((p) => [
          `\`${p.name}\``,
          p.in,
          typeOf(p.schema),
          p.required ? 'yes' : 'no',
          [cell(p.description ?? p.schema?.description), cell(constraints(p.schema))].filter(Boolean).join('. '),
        ]),
      ),
      '',
    );
  }
  const responses = Object.entries(op.responses ?? {});
  if (responses.length > 0) {
    lines.push(
      '**Responses**',
      '',
      table(
        ['Status', 'Description', 'Content'],
        responses.map(([status, r]) => [
          `\`${status}\``,
          cell(r.description),
          Object.entries(r.content ?? {})
            .map(
              ([type, c]) =>
                `\`${type}\`: ${typeOf(c.schema)}${c.schema?.description ? ` (${cell(c.schema.description)})` : ''}`,
            )
            .join('<br>'),
        ]),
      ),
      '',
    );
  }
  return lines;
}

function renderSchema(name, schema) {
  const lines = [`### ${name} {#${anchor(name)}}`, ''];
  if (schema.description) lines.push(prose(schema.description), '');
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) {
    lines.push(`Type: ${typeOf(schema)}`, '');
    return lines;
  }
  const required = new Set(schema.required ?? []);
  lines.push(
    table(
      ['Field', 'Type', 'Required', 'Description'],
      properties.map(([field, s]) => [
        `\`${field}\``,
        typeOf(s),
        required.has(field) ? 'yes' : 'no',
        [cell(s.description), cell(constraints({ ...s, pattern: undefined }))].filter(Boolean).join('. '),
      ]),
    ),
    '',
  );
  return lines;
}

export async function generate() {
  const doc = await fetchOpenApi();
  if (!doc.paths?.['/v1/bags']) fail(SCRIPT, 'the OpenAPI document has no /v1/bags path');
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [path, m, item[m]]),
  );
  const schemes = Object.entries(doc.components?.securitySchemes ?? {}).map(
    ([name, s]) => `\`${name}\` (${s.type}${s.scheme ? ` ${s.scheme}` : ''})`,
  );
  const text = [
    '---',
    'outline: [2, 3]',
    '---',
    '',
    generatedBy(SCRIPT, "the server's OpenAPI document (createApp → GET /openapi.json)"),
    '',
    '# HTTP API',
    '',
    `${prose(doc.info?.title ?? 'API')} ${doc.info?.version ?? ''} — ${prose(doc.info?.description ?? '')}`,
    '',
    'Served by `vlink-bag serve <dir>` or `serve({ root })` from `@vlink/bag-server` (see [Serving](../guide/serving)).',
    `This page is rendered from the OpenAPI ${doc.openapi} document the server publishes at \`GET /openapi.json\``,
    '(also `/v1/openapi.json`; a copy from this build: [openapi.json](/openapi.json)) and browses interactively at `/v1/docs`.',
    '',
    `Auth: ${schemes.length > 0 ? schemes.join(', ') : 'none'} — with a \`token\` configured every route except those marked`,
    '"No authentication" needs `Authorization: Bearer <token>`. Errors are always `{ "error": { "code", "message" } }`',
    'with a stable `BagError` code (see [Error](#schema-error)).',
    '',
    '## Endpoints',
    '',
    table(
      ['Method', 'Path', 'Summary'],
      operations.map(([path, method, op]) => [
        op['x-websocket'] ? 'WS' : method.toUpperCase(),
        `[\`${path}\`](#${operationAnchor(path, method, op)})`,
        cell(op.summary),
      ]),
    ),
    '',
    ...operations.flatMap(([path, method, op]) => renderOperation(path, method, op)),
    '## Schemas',
    '',
    ...Object.entries(doc.components?.schemas ?? {}).flatMap(([name, schema]) => renderSchema(name, schema)),
  ].join('\n');
  writeIfChanged(fromDocs('reference/http-api.md'), text);
  writeIfChanged(fromDocs('public/openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
  return `${operations.length} operations, ${Object.keys(doc.components?.schemas ?? {}).length} schemas`;
}
