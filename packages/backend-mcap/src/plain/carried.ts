import type { CarriedRecords } from '@vlink/bag-core';
import { CHANNEL_METADATA_PREFIX, COUNTERS_METADATA, HEADER_METADATA } from '../vcap/vcap-format.js';

/** Channel metadata key of a plain `.mcap` channel whose frames are not Pub (e.g. `C/Req`). */
export const PLAIN_ACTION_KEY = 'vlink.action';
/** Channel metadata key naming the ser (type) of a plain `.mcap` channel that has no schema record. */
export const PLAIN_SER_KEY = 'vlink.ser';

/**
 * `Info.metadata` entries that describe the source rather than being records of it: the MCAP reader's `mcap.header`
 * (its profile is reused) and `mcap.channel.<topic>` (back into channel metadata), and the VLink records the plain
 * writer writes itself (`VLinkHeader`, `VLinkBagCounters`) or that would be stale (`VLinkChannel_*`).
 */
export function isReaderDescription(name: string): boolean {
  return (
    name === 'mcap.header' ||
    name.startsWith('mcap.channel.') ||
    name === HEADER_METADATA ||
    name === COUNTERS_METADATA ||
    name.startsWith(CHANNEL_METADATA_PREFIX)
  );
}

/** The source MCAP's profile (`ros1`, `ros2`, …) when the carried records name one, else profile-neutral `''`. */
export function profileOf(metadata: CarriedRecords['metadata']): string {
  const header = metadata?.find((m) => m.name === 'mcap.header');
  const profile = header?.values['profile'] ?? '';
  // Our own `.vcap` profile would send readers to VLink's rules, which this file does not follow.
  return profile === 'vlink' ? '' : profile;
}
