#!/usr/bin/env node
// Checks the built site (.vitepress/dist): every page exists, and the generated pages hold what they are generated
// from (the CLI verbs, the HTTP routes, the writer defaults, the API of the main classes). Run by `npm run build`
// after `vitepress build`, and by scripts/test-examples.mjs at the repo root.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fromDocs } from './lib.mjs';

const dist = fromDocs('.vitepress/dist');
const EXPECT = {
  'index.html': ['vlink-bag'],
  'guide/getting-started.html': ['npm run demo', 'npm test', 'BagWriter.create', 'BagReader.create', 'vlink-bag serve'],
  'guide/concepts.html': ['Frame', 'since the recording start', '.vcapx'],
  'guide/recording.html': [
    'maxTaskDepth',
    '20_000',
    'splitByTime',
    'registerSplitCallback',
    'TriggerRecorder',
    'defaultPreMs',
    'BagPluginInterface',
  ],
  'guide/replay.html': ['openCursor', 'pauseToNext', 'forceDelay', 'BagProcessor', 'minCacheTime', 'analyzeTiming'],
  'guide/serving.html': ['/v1/bags', 'foxglove'],
  'guide/security.html': ['DNS rebinding', '--allow-origin https://app.foxglove.dev', 'CORRUPT_FILE'],
  'guide/cli.html': ['NDJSON'],
  'guide/python.html': ['vlink_bag', 'read_messages', 'to_dataframe'],
  'guide/formats.html': ['.vdbx', 'our-choices-where-the-spec-leaves-room'],
  'guide/examples.html': ['registerSplitCallback', 'BagProcessor', 'TriggerRecorder', 'serve('],
  'reference/cli.html': [
    'vlink-bag info',
    'vlink-bag record',
    'vlink-bag play',
    'vlink-bag merge',
    'vlink-bag serve',
    '--gaps',
  ],
  'reference/format.html': ['VLinkDatas', 'VLinkHeader', 'compression frame', 'TriggerRecorder'],
  'reference/http-api.html': ['/v1/bags', '/v1/bags/{id}/messages', '/v1/bags/{id}/replay', 'MessagePage', 'cursor'],
  'performance.html': ['vcap-node.json', 'vdb-node.json', 'http-node.json'],
  'api/index.html': ['@vlink/bag', '@vlink/bag-server'],
  'api/@vlink/bag/classes/BagWriter.html': ['pushDurable', 'registerSplitCallback'],
  'api/@vlink/bag/classes/BagReader.html': ['openCursor', 'frames'],
  'api/@vlink/bag-server/index.html': ['createApp', 'serve'],
  'openapi.json': ['"openapi"', '/v1/bags'],
};

const problems = [];
for (const [page, needles] of Object.entries(EXPECT)) {
  const file = join(dist, page);
  if (!existsSync(file)) {
    problems.push(`${page}: missing`);
    continue;
  }
  // Compare on text (VitePress escapes and highlights, so strip tags and decode the entities we look for), or on the
  // HTML itself for link targets.
  const html = readFileSync(file, 'utf8');
  const text = html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  for (const needle of needles)
    if (!text.includes(needle) && !html.includes(needle)) problems.push(`${page}: does not contain "${needle}"`);
}

let pages = 0;
const walk = (dir) => {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (entry.endsWith('.html')) pages++;
  }
};
if (existsSync(dist)) walk(dist);
if (pages < 100) problems.push(`only ${pages} HTML pages (the API reference alone has hundreds)`);

if (problems.length > 0) {
  console.error(`docs site check: ${problems.length} problem(s) in ${dist}\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`docs site check: ${Object.keys(EXPECT).length} pages checked, ${pages} HTML pages in total`);
