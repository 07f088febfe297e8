// The module groups of the mutation run: each mutates the sources listed and runs the compiled test files aimed at
// them (coverage analysis then runs, for each mutant, only those of the files that reached it). Paths from the
// repository root. A group's tests are the focused ones, not the whole package: on 2 shared cores every extra file
// that merely passes through a module costs a process per surviving mutant. Tests of other packages are not used:
// in the sandbox they import the unmutated workspace copy.
export const groups = {
  lzav: {
    pkg: 'core',
    title: 'LZAV decoding and the compression frame',
    // The decoding side, where a bug returns wrong bytes from a damaged or hostile stream. The compressor (compress*,
    // match, block-writer) is held by the round trips and by decoding the C reference's vectors.
    mutate: [
      'packages/core/src/codecs/lzav/decode.ts',
      'packages/core/src/codecs/lzav/decompress.ts',
      'packages/core/src/codecs/lzav/copy.ts',
      'packages/core/src/codecs/lzav/format.ts',
      'packages/core/src/codecs/compression-frame.ts',
    ],
    tests: ['packages/core/dist-test/codecs/**/*.test.js'],
  },
  vdb: {
    pkg: 'backend-sqlite',
    title: '.vdb row reading and writing',
    mutate: [
      'packages/backend-sqlite/src/vdb/reader.ts',
      'packages/backend-sqlite/src/vdb/frame-cursor.ts',
      'packages/backend-sqlite/src/vdb/file-writer.ts',
      'packages/backend-sqlite/src/vdb/url-registry.ts',
      'packages/backend-sqlite/src/vdb/eviction.ts',
      'packages/backend-sqlite/src/vdb/side-tables.ts',
      'packages/backend-sqlite/src/vdb/recording.ts',
      'packages/backend-sqlite/src/vdb/compression.ts',
      'packages/backend-sqlite/src/vdb/create-file.ts',
    ],
    tests: ['packages/backend-sqlite/dist-test/vdb/*.test.js', 'packages/backend-sqlite/dist-test/conformance.test.js'],
  },
  mcap: {
    pkg: 'backend-mcap',
    title: 'MCAP record parser and chunk loader',
    mutate: ['packages/backend-mcap/src/mcap/record-parser.ts', 'packages/backend-mcap/src/mcap/chunk-loader.ts'],
    tests: ['packages/backend-mcap/dist-test/mcap/*.test.js', 'packages/backend-mcap/dist-test/vcap/*.test.js'],
  },
  split: {
    pkg: 'core',
    title: 'split manifests and segment recovery',
    mutate: [
      'packages/core/src/split/manifest-parse.ts',
      'packages/core/src/split/manifest.ts',
      'packages/core/src/split/segment-recovery.ts',
    ],
    tests: ['packages/core/dist-test/split/*.test.js'],
  },
  playback: {
    pkg: 'core',
    title: 'playback session loop and clock',
    mutate: ['packages/core/src/playback/session-loop.ts', 'packages/core/src/playback/pass-clock.ts'],
    tests: ['packages/core/dist-test/playback/*.test.js', 'packages/core/dist-test/reader/*.test.js'],
  },
  server: {
    pkg: 'http-api',
    title: 'id resolution and auth in the server',
    mutate: ['packages/http-api/src/store/resolve-id.ts', 'packages/http-api/src/http/auth.ts'],
    tests: ['packages/http-api/dist-test/*.test.js', 'packages/http-api/dist-test/store/*.test.js'],
  },
};
