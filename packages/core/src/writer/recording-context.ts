import type { RecordingContext } from '../backend/backend.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import { localTimezoneMinutes } from '../model/time-format.js';
import { FORMAT_VERSION } from '../model/version.js';
import type { SchemaRegistry } from './schema-registry.js';

/** Builds what every file of one recording shares: start time, timezone, process, tag and the schema lookup. */
export function createRecordingContext(
  config: ResolvedWriterConfig,
  schemas: SchemaRegistry,
  onSplit?: RecordingContext['onSplit'],
): RecordingContext {
  const startTimestamp = config.startTimestamp > 0 ? Math.floor(config.startTimestamp) : Date.now();
  return {
    startTimestamp,
    timezone:
      config.timezone !== undefined && Number.isFinite(config.timezone)
        ? Math.trunc(config.timezone)
        : localTimezoneMinutes(startTimestamp),
    processName: config.processName || processName(),
    tagName: resolveTag(config.tagName),
    version: FORMAT_VERSION,
    resolveSchema: (name, type) => schemas.resolve(name, type),
    ...(onSplit ? { onSplit } : {}),
  };
}

/** Config tag → env `VLINK_BAG_TAG` → `"Empty"` (format reference §1.2). */
export function resolveTag(tag: string): string {
  if (tag) return tag;
  return envVar('VLINK_BAG_TAG') || 'Empty';
}

/** VLink stores the executable's basename; for a script runtime the script's name says more than `node`. */
export function processName(): string {
  const proc = (globalThis as { process?: { argv?: string[]; title?: string } }).process;
  const script = proc?.argv?.[1];
  const source = script || proc?.title || 'unknown';
  const base = source.split(/[\\/]/).pop() ?? source;
  return base.replace(/\.(exe|[cm]?[jt]s)$/i, '') || 'unknown';
}

export function envVar(name: string): string | undefined {
  try {
    return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  } catch {
    // Deno without --allow-env throws; no env means the default.
    return undefined;
  }
}
