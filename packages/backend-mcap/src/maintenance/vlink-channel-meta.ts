import {
  ActionType,
  actionText,
  countsForFrequency,
  parseAction,
  parseSchemaType,
  schemaTypeLabel,
  SchemaType,
  urlKindOf,
} from '@vlink/bag-core';
import type { Channel, Schema } from '../mcap/records.js';
import { fixed6, frequency } from '../vcap/vcap-format.js';

const URL_KINDS = new Set(['Method', 'Event', 'Field', 'Unknown']);

/** What a data walk counted for one channel. */
export class ChannelTally {
  count = 0;
  /** Payload bytes. */
  size = 0;
  firstNs: bigint | undefined;
  lastNs: bigint | undefined;

  add(logTime: bigint, payload: number): void {
    this.count++;
    this.size += payload;
    if (this.firstNs === undefined || logTime < this.firstNs) this.firstNs = logTime;
    if (this.lastNs === undefined || logTime > this.lastNs) this.lastNs = logTime;
  }
}

/**
 * The `VLinkChannel_<id>` values (format reference §5.2) for a channel, from what the file still says: the keys of an existing
 * record where they are present, else the channel record (action from its metadata, ser and family from its schema or
 * message encoding; vlink-bag writers also put `ser` and `encoding` there); `count`, `size` and `freq` always from the
 * tally. `loss` is not recorded anywhere else, so a record rebuilt without one says −1 (unknown).
 */
export function channelMetadataEntries(
  channel: Channel,
  schema: Schema | undefined,
  tally: ChannelTally | undefined,
  existing: ReadonlyMap<string, string> | undefined,
): Array<[string, string]> {
  // A garbled value in an existing record is replaced as if the record were lost.
  const actionText0 = existing?.get('action');
  const action = parseAction(
    actionText0 && (actionText0 === 'Unknown' || parseAction(actionText0) !== ActionType.Unknown)
      ? actionText0
      : channel.metadata.get('action'),
  );
  const type = existing?.get('type');
  const lossText = existing?.get('loss');
  const loss = lossText === undefined ? NaN : Number(lossText);
  const lossOk =
    lossText !== undefined &&
    /^\s*-?[\d.]+\s*$/.test(lossText) &&
    Number.isFinite(loss) &&
    (loss === -1 || (loss >= 0 && loss <= 1));
  const family = familyOf(schema, channel);
  const count = tally?.count ?? 0;
  let freq = 0;
  if (tally && countsForFrequency(action) && tally.firstNs !== undefined && tally.lastNs !== undefined) {
    // µs as the writer counts them: the log times differ by whole µs.
    freq = frequency(count, 0, Number((tally.lastNs - tally.firstNs) / 1000n));
  }
  return [
    ['index', String(channel.id - 1)],
    ['type', type && URL_KINDS.has(type) ? type : urlKindOf(action)],
    ['action', actionText(action)],
    ['encoding', existing?.get('encoding') ?? channel.metadata.get('encoding') ?? schemaTypeLabel(family)],
    ['ser', existing?.get('ser') ?? channel.metadata.get('ser') ?? schema?.name ?? ''],
    ['count', String(count)],
    ['size', String(tally?.size ?? 0)],
    // The loss is only in the VLinkChannel_* record: without it, it is unknown (−1), not 0.
    ['loss', lossOk ? lossText! : fixed6(existing === undefined ? -1 : 0)],
    ['freq', fixed6(freq)],
  ];
}

function familyOf(schema: Schema | undefined, channel: Channel): SchemaType {
  const fromSchema = parseSchemaType(schema?.encoding);
  return fromSchema !== SchemaType.Unknown ? fromSchema : parseSchemaType(channel.messageEncoding);
}

/** Whether an existing VLinkChannel record says exactly what the rebuilt one would (same keys, order and values). */
export function sameEntries(existing: ReadonlyMap<string, string>, entries: Array<[string, string]>): boolean {
  if (existing.size !== entries.length) return false;
  let i = 0;
  for (const [key, value] of existing) {
    const [k, v] = entries[i++]!;
    if (key !== k || value !== v) return false;
  }
  return true;
}
