import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type DefaultTheme } from 'vitepress';

// Written by scripts/gen-api.mjs next to the TypeDoc pages; absent until the generators ran.
const apiSidebarFile = fileURLToPath(new URL('../api/sidebar.json', import.meta.url));
const apiSidebar: DefaultTheme.SidebarItem[] = existsSync(apiSidebarFile)
  ? JSON.parse(readFileSync(apiSidebarFile, 'utf8'))
  : [];

const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Guide',
    items: [
      { text: 'Getting started', link: '/guide/getting-started' },
      { text: 'Concepts', link: '/guide/concepts' },
      { text: 'Recording', link: '/guide/recording' },
      { text: "The writer's queues", link: '/guide/writer' },
      { text: 'Replay', link: '/guide/replay' },
      { text: 'Serving over HTTP', link: '/guide/serving' },
      { text: 'Serving untrusted bags', link: '/guide/security' },
      { text: 'The command line', link: '/guide/cli' },
      { text: 'Python client', link: '/guide/python' },
      { text: 'Aligning into datasets', link: '/guide/alignment' },
      { text: 'Formats', link: '/guide/formats' },
      { text: 'Bags on object storage', link: '/guide/object-storage' },
      { text: 'Fleets of recordings', link: '/guide/fleet' },
      { text: 'Examples', link: '/guide/examples' },
    ],
  },
  {
    text: 'Reference',
    items: [
      { text: 'CLI reference', link: '/reference/cli' },
      { text: 'HTTP API', link: '/reference/http-api' },
      { text: 'File formats reference', link: '/reference/format' },
      { text: 'API reference', link: '/api/' },
      { text: 'Performance', link: '/performance' },
    ],
  },
];

export default defineConfig({
  title: 'vlink-bag',
  description:
    'Recording and replay for robotics middleware: VLink-compatible .vdb (SQLite) and .vcap (MCAP) bags for Node, Bun and Deno',
  lang: 'en-US',
  // The README and the generators' fragments (guide/_*.md, included by their pages) are not pages.
  srcExclude: ['README.md', '**/_*.md', 'scripts/**'],
  lastUpdated: false,
  // Dead links fail the build; localhost examples in the text are not links to check.
  ignoreDeadLinks: 'localhostLinks',
  markdown: { lineNumbers: false },
  // The local search index of ~170 pages is one lazily loaded chunk of about 0.7 MB; that is expected.
  vite: { build: { chunkSizeWarningLimit: 1024 } },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'CLI', link: '/reference/cli' },
      { text: 'HTTP API', link: '/reference/http-api' },
      { text: 'API', link: '/api/' },
      { text: 'Performance', link: '/performance' },
    ],
    sidebar: {
      '/guide/': guide,
      '/reference/': guide,
      '/performance': guide,
      '/api/': [{ text: 'API reference', items: apiSidebar }, ...guide.slice(1)],
    },
    outline: [2, 3],
    search: { provider: 'local' },
    socialLinks: [{ icon: 'github', link: 'https://github.com/vlink-bag/vlink-bag' }],
    footer: { message: 'Apache-2.0', copyright: 'vlink-bag contributors' },
  },
});
