/**
 * `@vlink/bag-core/internal`: the building blocks our own backends and tools share — the split-recording machinery
 * (`SplitWriter`, `SplitReader`, the segment ledger, manifest writing and recovery), the compression frame around
 * LZAV blobs, counter tables, the check-report list, joining byte pieces (`concatBytes`), the time merge of chunks that
 * overlap (`TimeMerge`: the ROS 1 and MCAP readers) and the `Atomics` helper thread (`runtime/helper-thread.ts`).
 * The helper thread's shared-memory protocol has a subpath of its own, `@vlink/bag-core/internal/thread-control`, so
 * the program running on such a thread loads that module alone, not the rest of core.
 *
 * **Unstable.** Not part of the public API and not covered by semver: any release may change or remove these. They
 * are exported only because `@vlink/bag-sqlite`, `@vlink/bag-mcap` and `@vlink/bag-cli` are separate packages.
 * Applications and third-party backends use `@vlink/bag-core` (or `@vlink/bag`) and `@vlink/bag-core/testing`.
 */
export { dumpJson, formatJsonDouble } from './split/json-dump.js';
export type { JsonValue, DumpOptions } from './split/json-dump.js';
export { manifestJson, serializeManifest, MANIFEST_FLOAT_KEYS } from './split/manifest.js';
export { listedSegments } from './split/manifest-parse.js';
export { retagManifest } from './split/manifest-tag.js';
export { SegmentNamer } from './split/segment-naming.js';
export type { SegmentNamingOptions } from './split/segment-naming.js';
export { shouldSplit, splitRuleOf, manifestSplitBySize } from './split/split-policy.js';
export type { SplitRule } from './split/split-policy.js';
export { SegmentLedger, urlFrequency } from './split/segment-ledger.js';
export type { SegmentStats, UrlCounters, LedgerEntry, Totals } from './split/segment-ledger.js';
export { nodeSplitFiles, isBareFileName, splitPath, stemOf, directoryOf } from './split/split-files.js';
export type { SplitFiles } from './split/split-files.js';
export { SplitWriter } from './split/split-writer.js';
export type { SegmentWriter, SplitFormat, SplitWriterOptions, RecordingUrlIdentity } from './split/split-writer.js';
export { SplitReader } from './split/split-reader.js';
export { urlSplitFiles } from './split/url-split-files.js';
export { openSourceReader, openUrlReader } from './backend/open-source.js';
export { UrlIdCache } from './backend/url-id-cache.js';
export { DEFAULT_MERGE_LIMITS, TimeMerge } from './reader/time-merge.js';
export type { MergeLimits, MergeSource } from './reader/time-merge.js';
export {
  channelFamily,
  checkStorableNames,
  keptFamily,
  keptSer,
  schemaKey,
  urlFamilyOfSer,
} from './model/url-identity.js';
export type { UrlPlace } from './model/url-identity.js';
export {
  bagFolderFacts,
  folderFormatOf,
  isInsideRoot,
  listLocalBagFiles,
  segmentsOfManifests,
} from './backend/local-bag-files.js';
export type { LocalBagFile, LocalBagFileOptions } from './backend/local-bag-files.js';
export type { SplitReaderFormat, SplitReaderOptions } from './split/split-reader.js';
export { startSegment, SegmentChain } from './split/segment-sequence.js';
export type { SequencedSegment } from './split/segment-sequence.js';
export { unlistedSegmentNames, addRecoveredTotals, repairedManifestText } from './split/segment-recovery.js';
export type { RecoveredSegment, RecoveredTotals } from './split/segment-recovery.js';
export * from './codecs/compression-frame.js';
export { checkZstdWindows, MAX_ZSTD_WINDOW } from './codecs/zstd-windows.js';
export type { ZstdSource } from './codecs/zstd-windows.js';
export { DropCounters, mergeCounterTables, sanitizeCounterTable } from './writer/drop-counters.js';
export type { CounterTable } from './writer/drop-counters.js';
export { ProblemList, MAX_CHECK_PROBLEMS } from './maintenance/check-report.js';
export { HelperThread, canWaitOnSharedMemory } from './runtime/helper-thread.js';
export { inheritedExecArgv } from './runtime/exec-argv.js';
export { concatBytes, equalBytes } from './util/bytes.js';
export { unrefTimer, yieldToEventLoop } from './util/schedule.js';
export { privateTempDir, reservedTempDir, usePrivateTempRoot } from './util/private-temp-dir.js';
export type { PrivateTempDir } from './util/private-temp-dir.js';
export type { HelperThreadOptions } from './runtime/helper-thread.js';
