// api/** : the API reference, TypeDoc + typedoc-plugin-markdown over the entry point of every public package (the
// `exports` of each package.json), in one TypeScript program (tsconfig.typedoc.json maps the workspace packages to
// their sources). Modules are named after the import specifier users write. Also writes api/sidebar.json for the
// VitePress sidebar.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Application, Converter, ReflectionKind } from 'typedoc';
import { fail, fromDocs, fromRoot, writeIfChanged } from './lib.mjs';

const SCRIPT = 'gen-api.mjs';

/** Entry file → the specifier users import it by. */
export const ENTRY_POINTS = {
  'packages/bag/src/index.ts': '@vlink/bag',
  'packages/core/src/index.ts': '@vlink/bag-core',
  'packages/core/src/testing/index.ts': '@vlink/bag-core/testing',
  'packages/backend-sqlite/src/index.ts': '@vlink/bag-sqlite',
  'packages/backend-mcap/src/index.ts': '@vlink/bag-mcap',
  'packages/http-api/src/index.ts': '@vlink/bag-server',
  'packages/cli/src/index.ts': '@vlink/bag-cli',
};

export async function generate() {
  const out = fromDocs('api');
  rmSync(out, { recursive: true, force: true });
  const app = await Application.bootstrapWithPlugins({
    entryPoints: Object.keys(ENTRY_POINTS).map((file) => fromRoot(file)),
    entryPointStrategy: 'resolve',
    tsconfig: fromDocs('tsconfig.typedoc.json'),
    plugin: ['typedoc-plugin-markdown'],
    out,
    readme: 'none',
    name: 'API reference',
    // The packages type-check in their own builds; other engineers' work in progress must not stop the docs.
    skipErrorChecking: true,
    excludePrivate: true,
    excludeInternal: true,
    excludeExternals: true,
    excludeNotDocumented: false,
    disableSources: true,
    gitRevision: 'main',
    logLevel: 'Warn',
    validation: { notExported: false, invalidLink: false, rewrittenLink: false, unusedMergeModuleWith: false },
    // typedoc-plugin-markdown
    hidePageHeader: true,
    hideBreadcrumbs: true,
    useCodeBlocks: true,
    parametersFormat: 'table',
    enumMembersFormat: 'table',
    propertiesFormat: 'table',
    typeDeclarationFormat: 'table',
    sanitizeComments: true,
    entryFileName: 'index',
    // A page per class, interface and enum; functions, variables and types sit on their module's page. Halves the
    // page count (and the build time) against a page per member, and keeps the small things where they are read.
    outputFileStrategy: 'members',
    membersWithOwnFile: ['Class', 'Interface', 'Enum'],
    modulesFileName: 'modules',
  });
  // Name each module after its import specifier instead of its path (`packages/bag/src`).
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      // TypeDoc names a module by its path below the entry points' common folder: `bag/src`, `core/src/testing`.
      const entry = Object.keys(ENTRY_POINTS).find((e) => e.replace(/^packages\//, '').replace(/\/index\.ts$/, '') === module.name);
      if (entry) module.name = ENTRY_POINTS[entry];
    }
  });
  const project = await app.convert();
  if (!project) fail(SCRIPT, 'TypeDoc could not convert the entry points (see the messages above)');
  const names = project.getChildrenByKind(ReflectionKind.Module).map((m) => m.name);
  const unnamed = names.filter((n) => !Object.values(ENTRY_POINTS).includes(n));
  if (unnamed.length > 0) fail(SCRIPT, `modules not mapped to a package name: ${unnamed.join(', ')}`);
  await app.generateOutputs(project);
  if (!existsSync(join(out, 'index.md'))) fail(SCRIPT, 'TypeDoc wrote no api/index.md');
  const pages = writeSidebar(out);
  return `${names.length} modules, ${pages} pages`;
}

/** One collapsed sidebar group per module, with its members grouped by kind (the plugin's folders). */
function writeSidebar(out) {
  let pages = 0;
  const link = (file) => '/' + relative(fromDocs(), file).replace(/\\/g, '/').replace(/(index)?\.md$/, '');
  const walk = (dir) =>
    readdirSync(dir)
      .sort()
      .flatMap((entry) => {
        const path = join(dir, entry);
        return statSync(path).isDirectory() ? walk(path) : entry.endsWith('.md') ? [path] : [];
      });
  const all = walk(out);
  pages = all.length;
  // Module pages are the index.md files whose folder holds kind folders (classes/, functions/, …).
  const KINDS = ['classes', 'interfaces', 'enumerations', 'namespaces', 'functions', 'type-aliases', 'variables'];
  const modules = all.filter((f) => f.endsWith('/index.md') && f !== join(out, 'index.md')).filter((f) => !KINDS.some((k) => f.includes(`/${k}/`)));
  const sidebar = [{ text: 'Overview', link: '/api/' }];
  for (const moduleIndex of modules) {
    const dir = moduleIndex.slice(0, -'/index.md'.length);
    const name = relative(out, dir).replace(/\\/g, '/');
    const items = KINDS.filter((k) => existsSync(join(dir, k))).map((kind) => ({
      text: kind.replace('-', ' ').replace(/^./, (c) => c.toUpperCase()),
      collapsed: true,
      items: readdirSync(join(dir, kind))
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => ({ text: f.replace(/\.md$/, ''), link: link(join(dir, kind, f)) })),
    }));
    sidebar.push({ text: name, link: link(moduleIndex), collapsed: true, items });
  }
  writeIfChanged(join(out, 'sidebar.json'), `${JSON.stringify(sidebar, null, 2)}\n`);
  return pages;
}
