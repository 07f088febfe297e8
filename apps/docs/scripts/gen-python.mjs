// guide/python.md from the Python client's README (clients/python/README.md), so the docs say what the package
// says. Links into the client's folder point at the repository; headings move one level down under the page title.
import { readFileSync } from 'node:fs';
import { fail, fromDocs, fromRoot, generatedBy, rebaseLinks, vueSafe, writeIfChanged } from './lib.mjs';

const SCRIPT = 'gen-python.mjs';

export async function generate() {
  const source = readFileSync(fromRoot('clients/python/README.md'), 'utf8');
  if (!source.includes('Client('))
    fail(SCRIPT, 'clients/python/README.md no longer shows `Client(`: check the page still makes sense');
  const dropped = [];
  const body = source
    .replace(/^# .*\n/, '')
    // A bare ALL_CAPS line is a placeholder another script fills in (e.g. RESULTS_PYTHON): not for readers.
    .split('\n')
    .filter((line) => {
      if (!/^[A-Z][A-Z0-9_]{3,}$/.test(line.trim())) return true;
      dropped.push(line.trim());
      return false;
    })
    .join('\n')
    .trim();
  const linked = rebaseLinks(body, 'clients/python', 'guide');
  if (dropped.length > 0)
    console.warn(`  ${SCRIPT}: left out placeholder lines of clients/python/README.md: ${dropped.join(', ')}`);
  const text = [
    generatedBy(SCRIPT, 'clients/python/README.md'),
    '',
    '# Python client',
    '',
    '::: tip',
    'The client reads and writes bag files on disk without a server (`vlink_bag.open`, `Writer`), and talks to the HTTP API of `vlink-bag serve` (see [Serving](./serving) and the [HTTP API reference](../reference/http-api)) with the same API.',
    'The example `examples/serve-python.ts` in the repository starts a server and runs a snippet of this client against it.',
    ':::',
    '',
    vueSafe(linked),
    '',
  ].join('\n');
  writeIfChanged(fromDocs('guide/python.md'), text);
  return `${text.split('\n').length} lines`;
}
