import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { BagWriter } from '../writer/bag-writer.js';
import type { SchemaRegistry } from '../writer/schema-registry.js';
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
 */
export async function writeDump(
  plan: DumpPlan,
  config: TriggerConfig,
  hooks: TriggerHooks,
  sleep: (ms: number) => Promise<void>,
  schemas: SchemaRegistry,
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
  let frames = 0;
  let bytes = 0;
  let durationUs = 0;
  try {
    writer.registerSchemaCallback((name, schemaType) => schemas.resolve(name, schemaType));
    if (config.bagPlugin) writer.bindPluginInterface(config.bagPlugin());
    for (const [url, loss] of plan.losses) writer.setUrlLoss(url, loss);
    hooks.onDumpStarted?.({ file: plan.file, reason: plan.reason, triggerUs: plan.triggerUs, frames: entries.length });
    let sinceSleep = 0;
    for (const { captureUs, frame } of entries) {
      const out: Frame = { ...frame, timestamp: captureUs - minCapture, actionType: recordedAction(frame.actionType) };
      if (writer.push(out) < 0) continue;
      frames++;
      bytes += out.data.length;
      durationUs = out.timestamp;
      hooks.onFrame?.(out);
      sinceSleep += out.data.length;
      if (config.sleepTimeMs > 0 && config.sleepInterval > 0 && sinceSleep >= config.sleepInterval) {
        sinceSleep = 0;
        await sleep(config.sleepTimeMs);
      }
    }
  } finally {
    await writer.close();
  }
  const failure = writer.stats().lastError;
  if (writer.fail() && failure) throw failure;
  return { frames, bytes, urls: plan.losses.size, startTimestamp, durationUs };
}

/** The recorder subscribes: fields are recorded as `Get`, events as `Sub`; RPC actions are kept as given. */
function recordedAction(action: ActionType): ActionType {
  if (action === ActionType.Set || action === ActionType.Get) return ActionType.Get;
  if (action === ActionType.Publish || action === ActionType.Subscribe || action === ActionType.Unknown)
    return ActionType.Subscribe;
  return action;
}
