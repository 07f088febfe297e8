import { createHash } from 'node:crypto';
import type { ReadFrame } from './read-all.js';

/**
 * Every sample of one ULog topic instance in a few hashes, as `fixtures/foreign/generator/ulog.py` writes them for a
 * real log (`message_digests`): its timestamps (uint64 LE) and its payloads (`uint32 LE size` + bytes), in file order.
 */
export interface UlogDigest {
  name: string;
  multi_id: number;
  count: number;
  first_timestamp_us: number | null;
  last_timestamp_us: number | null;
  bytes: number;
  timestamps_sha256: string;
  payloads_sha256: string;
}

/** The digest of `samples` (frames of one url, in file order); `startUs` turns their times back into the log's. */
export function sampleDigest(samples: readonly ReadFrame[], startUs: number): Omit<UlogDigest, 'name' | 'multi_id'> {
  const times = createHash('sha256');
  const payloads = createHash('sha256');
  const word = new DataView(new ArrayBuffer(8));
  for (const f of samples) {
    word.setBigUint64(0, BigInt(f.timestamp + startUs), true);
    times.update(new Uint8Array(word.buffer));
    word.setUint32(0, f.data.length, true);
    payloads.update(new Uint8Array(word.buffer, 0, 4));
    payloads.update(f.data);
  }
  return {
    count: samples.length,
    first_timestamp_us: samples.length > 0 ? samples[0]!.timestamp + startUs : null,
    last_timestamp_us: samples.length > 0 ? samples.at(-1)!.timestamp + startUs : null,
    bytes: samples.reduce((n, f) => n + f.data.length, 0),
    timestamps_sha256: times.digest('hex'),
    payloads_sha256: payloads.digest('hex'),
  };
}
