// The module groups of the mutation run: each mutates the sources listed and runs the compiled tests that exercise
// them (paths from the repository root; tests are the built dist files).
export const groups = {
  lzav: {
    pkg: 'core',
    title: 'LZAV and the compression frame',
    mutate: ['packages/core/src/codecs/lzav/!(*.test).ts', 'packages/core/src/codecs/compression-frame.ts'],
    tests: ['packages/core/dist/codecs/**/*.test.js'],
  },
  vdb: {
    pkg: 'backend-sqlite',
    title: '.vdb row reading and writing',
    mutate: [
      'packages/backend-sqlite/src/vdb/reader.ts',
      'packages/backend-sqlite/src/vdb/frame-cursor.ts',
      'packages/backend-sqlite/src/vdb/file-writer.ts',
      'packages/backend-sqlite/src/vdb/recording.ts',
      'packages/backend-sqlite/src/vdb/compression.ts',
    ],
    tests: ['packages/backend-sqlite/dist/vdb/*.test.js', 'packages/backend-sqlite/dist/conformance.test.js'],
  },
  mcap: {
    pkg: 'backend-mcap',
    title: 'MCAP record parser and chunk loader',
    mutate: ['packages/backend-mcap/src/mcap/record-parser.ts', 'packages/backend-mcap/src/mcap/chunk-loader.ts'],
    tests: ['packages/backend-mcap/dist/mcap/*.test.js', 'packages/backend-mcap/dist/vcap/*.test.js'],
  },
  split: {
    pkg: 'core',
    title: 'split manifests and segment recovery',
    mutate: [
      'packages/core/src/split/manifest-parse.ts',
      'packages/core/src/split/manifest.ts',
      'packages/core/src/split/segment-recovery.ts',
    ],
    tests: ['packages/core/dist/split/*.test.js'],
  },
  playback: {
    pkg: 'core',
    title: 'playback session loop and clock',
    mutate: ['packages/core/src/playback/session-loop.ts', 'packages/core/src/playback/pass-clock.ts'],
    tests: ['packages/core/dist/playback/*.test.js'],
  },
  server: {
    pkg: 'http-api',
    title: 'id resolution and auth in the server',
    mutate: ['packages/http-api/src/store/resolve-id.ts', 'packages/http-api/src/http/auth.ts'],
    tests: ['packages/http-api/dist/*.test.js', 'packages/http-api/dist/store/*.test.js'],
  },
};
