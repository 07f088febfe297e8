import { extensionOf } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { BagWriter } from '../writer/bag-writer.js';
import type { SchemaRegistry } from '../writer/schema-registry.js';
import type { DumpFiles } from './dump-files.js';
import type { RingEntry } from './time-ring.js';
import type { TriggerConfig } from './trigger-config.js';
import type { TriggerHooks } from './trigger-types.js';

export interface DumpPlan {
  file: string;
  reason: string;
  triggerUs: number;
  /** Selected entries, stable-sorted by capture time. */
  entries: RingEntry[];
  /** Loss ratio per url that has frames in the dump. */
  losses: Map<string, number>;
  /** Wall µs at capture-clock zero. */
  wallAnchorUs: number;
}

/**
 * Writes one dump (format reference §9.2 steps 5–7): a sync-mode writer tagged with the reason, frames re-timed to the dump's
 * start, recorded as the subscriber saw them (`Get` for fields, `Sub` for events), an optional bag plugin, and the
 * optional throttle. The writer asks `schemas` for each url it stores, so a dump embeds the schemas of the urls it
 * holds and no others.
 *
 * A dump that fails part-way (a storage error, a throwing hook) is deleted: closed, its file would be a complete,
 * check-passing bag holding part of the window, which rotation, uploaders and `check` would take for a real event
 * record. The error it throws is the cause: a hook's own `BagError` as it threw it, any other exception of a hook as
 * `ABORTED` naming the hook (never `IO_ERROR`: nothing went wrong with the file).
 */
export async function writeDump(
  plan: DumpPlan,
  config: TriggerConfig,
  hooks: TriggerHooks,
  sleep: (ms: number) => Promise<void>,
  schemas: SchemaRegistry,
  files: Pick<DumpFiles, 'remove'>,
): Promise<{ frames: number; bytes: number; urls: number; startTimestamp: number; durationUs: number }> {
  const { entries } = plan;
  const minCapture = Math.min(plan.triggerUs, entries[0]?.captureUs ?? plan.triggerUs);
  const startTimestamp = Math.floor((plan.wallAnchorUs + minCapture) / 1000);
  const writer = await BagWriter.create(plan.file, {
    compress: config.enableCompress ? 'auto' : 'none',
    enableChunkCrc: config.enableChunkCrc,
    tagName: plan.reason,
    syncMode: true,
    optimizeOnExit: true,
    startTimestamp,
  });
  // The segments a split dump (`fileType: 'vdbx'`) opened, to delete with it when it fails: the first one is open
  // from the start (`<stem>.1<ext>`: dumps are not named by time), the others are announced as they open.
  const segments: string[] = [];
  if (writer.isSplitMode()) {
    const ext = extensionOf(plan.file);
    segments.push(`${plan.file.slice(0, -ext.length)}.1${ext.slice(0, -1)}`);
  }
  writer.registerSplitCallback((_index, file) => segments.push(file));
  let frames = 0;
  let bytes = 0;
  let durationUs = 0;
  try {
    writer.registerSchemaCallback((name, schemaType) => schemas.resolve(name, schemaType));
    if (config.bagPlugin) writer.bindPluginInterface(config.bagPlugin());
    for (const [url, loss] of plan.losses) writer.setUrlLoss(url, loss);
    const started = { file: plan.file, reason: plan.reason, triggerUs: plan.triggerUs, frames: entries.length };
    callHook('onDumpStarted', plan.file, () => hooks.onDumpStarted?.(started));
    let sinceSleep = 0;
    for (const { captureUs, frame } of entries) {
      const out = retimed(frame, captureUs, minCapture);
      if (writer.push(out) < 0) {
        // A storage error ends the dump (the file is no longer whole); a refused frame (a plugin's) is skipped.
        if (writer.fail()) break;
        continue;
      }
      frames++;
      bytes += out.data.length;
      durationUs = out.timestamp;
      callHook('onFrame', plan.file, () => hooks.onFrame?.(out));
      sinceSleep += out.data.length;
      if (config.sleepTimeMs > 0 && config.sleepInterval > 0 && sinceSleep >= config.sleepInterval) {
        sinceSleep = 0;
        await sleep(config.sleepTimeMs);
      }
    }
  } catch (error) {
    await discard(writer, plan.file, segments, files);
    throw error;
  }
  try {
    await writer.close();
  } catch (error) {
    await discard(writer, plan.file, segments, files);
    throw error;
  }
  const failure = writer.stats().lastError;
  if (writer.fail() && failure) {
    await discard(writer, plan.file, segments, files);
    throw failure;
  }
  return { frames, bytes, urls: plan.losses.size, startTimestamp, durationUs };
}

/**
 * A ring entry as the dump stores it: its log time moved to the dump's start, and its publish time by the same
 * amount (both count on the recorder clock, format reference §1.3: they keep one base, so publish-to-log latency
 * survives the dump).
 */
function retimed(frame: Frame, captureUs: number, minCapture: number): Frame {
  const out: Frame = { ...frame, timestamp: captureUs - minCapture, actionType: recordedAction(frame.actionType) };
  const publish = frame.publishTime;
  if (publish === undefined || !Number.isFinite(publish)) delete out.publishTime;
  else out.publishTime = publish - minCapture;
  return out;
}

/** Runs a user hook; what it throws fails the dump with the hook's own error as the cause. */
function callHook(name: string, file: string, call: () => void): void {
  try {
    call();
  } catch (error) {
    throw BagError.wrap(error, 'ABORTED', `the ${name} hook threw; dump abandoned`, { file });
  }
}

/** Closes a failed dump's writer and deletes what it wrote (the file or manifest, its sidecar, its segments). */
async function discard(
  writer: BagWriter,
  file: string,
  segments: readonly string[],
  files: Pick<DumpFiles, 'remove'>,
): Promise<void> {
  try {
    await writer.close();
  } catch {
    // The dump already failed; that error is the one to report.
  }
  for (const path of [...segments, file]) await files.remove(path).catch(() => undefined);
}

/** The recorder subscribes: fields are recorded as `Get`, events as `Sub`; RPC actions are kept as given. */
function recordedAction(action: ActionType): ActionType {
  if (action === ActionType.Set || action === ActionType.Get) return ActionType.Get;
  if (action === ActionType.Publish || action === ActionType.Subscribe || action === ActionType.Unknown)
    return ActionType.Subscribe;
  return action;
}
