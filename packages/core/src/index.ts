export { BagError } from './errors.js';
export type { BagErrorCode, BagErrorContext } from './errors.js';
export {
  SchemaType,
  schemaTypeLabel,
  parseSchemaType,
  isValidSchemaType,
  isRealSchemaType,
  inferSchemaType,
  resolveSchemaType,
} from './model/schema-type.js';
export {
  ActionType,
  actionText,
  parseAction,
  urlKindOf,
  isRpcAction,
  isRequestAction,
  countsForFrequency,
  serForAction,
} from './model/action-type.js';
export type { ActionText, UrlKind } from './model/action-type.js';
export { createFrame } from './model/frame.js';
export {
  COMPANION_META_SER,
  COMPANION_META_SUFFIX,
  companionMetaFrame,
  companionMetaOf,
  companionMetaUrl,
  parseCompanionMeta,
} from './model/companion-meta.js';
export type { CompanionMeta } from './model/companion-meta.js';
export type { Frame, SchemaData } from './model/frame.js';
export type { Info, UrlMeta, InfoMetadata, AttachmentMeta } from './model/info.js';
export { infoProblems, isProblemsRecord, problemsRecord } from './model/info-problems.js';
export {
  CompressType,
  DEFAULT_WRITER_CONFIG,
  parseCompress,
  resolveWriterConfig,
} from './model/config.js';
export type {
  CarriedAttachment,
  CarriedRecords,
  CompressName,
  WriterConfig,
  ResolvedWriterConfig,
  ReaderOptions,
} from './model/config.js';
export { formatVlinkDate, formatFileTime, parseVlinkDate, localTimezoneMinutes } from './model/time-format.js';
export { FORMAT_VERSION, FORMAT_VERSION_TEXT } from './model/version.js';
export type {
  Backend,
  BackendWriter,
  BackendReader,
  CursorQuery,
  RecordingContext,
  TimeBase,
} from './backend/backend.js';
export {
  registerByteSourceScheme,
  registerUrlScheme,
  isRemotePath,
  listUrl,
  openByteSource,
  openByteSourceSync,
  type ByteSource,
  type ByteSourceOpener,
  type UrlEntry,
  type UrlScheme,
  type UrlStaging,
} from './backend/byte-source.js';
export {
  registerBackend,
  registeredExtensions,
  registeredFolderMarkers,
  registeredNumberedExtensions,
  findBackend,
  backendFor,
  detectBackend,
  extensionOf,
  bagExtensionOf,
} from './backend/registry.js';
export type { BackendPurpose } from './backend/registry.js';
export { guardFile, guardSidecars } from './backend/file-guard.js';
export type { FileGuardOptions, GuardedRole } from './backend/file-guard.js';
export { BagWriter } from './writer/bag-writer.js';
export type { WriterErrorCallback } from './writer/bag-writer.js';
export type { SchemaCallback } from './writer/schema-registry.js';
export type { WriterStats, DropReason } from './writer/writer-stats.js';
export { SnapshotSampler, SNAPSHOT_SKIP, MISSED_SLOT } from './recording/snapshot-sampler.js';
export type {
  SnapshotSamplerOptions,
  SnapshotSkip,
  Snapshot,
  SnapshotComponent,
  TickOutcome,
  SamplerStats,
} from './recording/snapshot-sampler.js';
export { ActionRecorder, SUBMIT_CAUSE } from './recording/action-recorder.js';
export type { ActionRecorderOptions, ActionRecord, SubmitResult, SubmitStamp } from './recording/action-recorder.js';
export type { FrameSink, RecordingClock } from './recording/frame-sink.js';
export { BagReader } from './reader/bag-reader.js';
export type { FramesOptions } from './reader/bag-reader.js';
export type { CursorConfig } from './reader/cursor-config.js';
export { BagPluginInterface, PluginDirection, UrlRemapCache } from './plugins/bag-plugin.js';
export { lzav } from './codecs/lzav/index.js';
export { WriterDropEvent, WriterErrorEvent } from './writer/bag-writer.js';
export type { BagWriterOptions } from './writer/bag-writer.js';
export type { SourceLimits } from './writer/source-queues.js';
export type { WriterMode } from './writer/engine.js';
export type { ParentLink, WorkerLink, WorkerRuntime } from './runtime/worker-link.js';
export { availableWorkerRuntimes, defaultWorkerRuntime, parentLink, spawnWorker } from './runtime/spawn-worker.js';
export type { WorkerEntries } from './runtime/spawn-worker.js';
export { tapSource } from './writer/tap-source.js';
export type { TapSource, TapOptions, TapDisposer, EmitterLike } from './writer/tap-source.js';
export { registerTerminateSignal } from './writer/terminate-signal.js';
export type { TerminateSignalOptions } from './writer/terminate-signal.js';
export type { TerminateSignal } from './runtime/signals.js';
export { PlayStatus } from './playback/play-status.js';
export { DEFAULT_PLAY_CONFIG, resolvePlayConfig } from './playback/play-config.js';
export type { PlayConfig, ResolvedPlayConfig } from './playback/play-config.js';
export { Playback } from './playback/playback.js';
export type {
  OutputCallback,
  StatusCallback,
  ReadyCallback,
  FinishCallback,
  PlaybackErrorCallback,
} from './playback/player.js';
export { BagProcessor } from './processor/bag-processor.js';
export { BagProcessorPlugin } from './processor/processor-plugin.js';
export type { DataTimestampFn } from './processor/processor-plugin.js';
export { DEFAULT_PROCESSOR_CONFIG } from './processor/processor-config.js';
export type { ProcessorConfig } from './processor/processor-config.js';
export { TriggerRecorder } from './trigger/trigger-recorder.js';
export { DEFAULT_TRIGGER_CONFIG, MAX_WINDOW_MS } from './trigger/trigger-config.js';
export type { TriggerConfig, TriggerParams, UrlConfig, OverflowPolicy } from './trigger/trigger-config.js';
export type {
  DumpResult,
  TriggerHooks,
  TriggerTimers,
  TriggerEnvironment,
  TriggerStats,
} from './trigger/trigger-types.js';
export type { TriggerDrops } from './trigger/url-store.js';
export type { DumpFiles } from './trigger/dump-files.js';
export { analyzeTiming, urlTiming, DEFAULT_GAP_FACTOR } from './analysis/timing.js';
export { SUMMARY_SEMANTICS, summarizeBag, summaryPath, writeSummaryFile } from './analysis/summary.js';
export type { BagSummary, StreamSummary, SummarySource } from './analysis/summary.js';
export { SUMMARY_JSON_SCHEMA } from './analysis/summary-schema.js';
export type { TimingOptions, TimingSource, UrlTiming } from './analysis/timing.js';
export { REPORT_SEMANTICS, analyzeReport } from './analysis/report.js';
export type { BagReport, StreamReport, OffsetGroup, OffsetReport, ReportOptions } from './analysis/report.js';
export { REPORT_JSON_SCHEMA } from './analysis/report-schema.js';
export type { Histogram } from './analysis/histogram.js';
// Split recordings: the manifest model and its parser. The machinery that writes and reads split recordings is in
// `@vlink/bag-core/internal` (internal.ts), for our backends only.
export type { SplitManifest, ManifestHeader, ManifestUrl, ManifestFlavor } from './split/manifest.js';
export { parseManifest } from './split/manifest-parse.js';
export type { ParsedManifest } from './split/manifest-parse.js';
export { canRepair, repairBag } from './maintenance/repair.js';
export type {
  RepairOptions,
  RepairReport,
  ReindexOptions,
  SalvageOptions,
  SalvageResult,
  UrlRepair,
} from './maintenance/repair-report.js';
export { formatCheckProblem } from './maintenance/check-report.js';
export type {
  CheckOptions,
  CheckProblem,
  CheckReport,
  MaintenanceProgress,
  ProgressCallback,
} from './maintenance/check-report.js';
