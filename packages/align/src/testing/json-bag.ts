import { ActionType, BagWriter, type Frame, SchemaType } from '@vlink/bag';

/** The recording start of the test bags: time columns are this plus the µs of the time base. */
export const START_MS = 1_700_000_000_000;

export interface JsonMessage {
  url: string;
  /** Log time, µs. */
  log: number;
  /** Publish time, µs (default: the log time). */
  publish?: number;
  value: unknown;
  action?: ActionType;
}

const encoder = new TextEncoder();

/** A frame whose payload is `value` as JSON (ser `json`, Raw family: what the decoder reads as JSON). */
export function jsonFrame(m: JsonMessage): Frame {
  return {
    timestamp: m.log,
    ...(m.publish === undefined ? {} : { publishTime: m.publish }),
    url: m.url,
    data: encoder.encode(JSON.stringify(m.value)),
    serType: 'json',
    schemaType: SchemaType.Raw,
    actionType: m.action ?? ActionType.Publish,
  };
}

/** Writes the messages (sorted by log time) into a bag at `path` and closes it. */
export async function writeJsonBag(path: string, messages: readonly JsonMessage[]): Promise<void> {
  const writer = await BagWriter.create(path, { maxQueueTimeMs: 0, startTimestamp: START_MS });
  for (const m of [...messages].sort((a, b) => a.log - b.log)) await writer.write(jsonFrame(m));
  await writer.close();
}
