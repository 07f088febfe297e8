import { BagError } from '@vlink/bag-core';

/**
 * The largest log time, in µs from the recording start, the MCAP writers store exactly. A message's time is written as
 * the start (two 32-bit halves) plus an offset in ns, a double (`setTime`). The offset (µs × 1000) is a multiple of 8
 * and the start's low half a multiple of 64 (whole ms), and doubles hold every multiple of 8 below 2^56: exact up to
 * about 834 days after the start. Past it the sum is rounded (times of 1e14 µs came back 1–2 µs off) and, near 2^53
 * µs, wrapped; such a frame is refused (`LIMIT_REACHED`: that frame only) rather than stored wrong.
 */
export const MAX_LOG_OFFSET_US = Math.floor((2 ** 56 - 2 ** 33) / 1000);

/** The refusal of a frame whose log time is past {@link MAX_LOG_OFFSET_US}. */
export function logTimeOutOfRange(us: number, file: string, url: string): BagError {
  return new BagError(
    'LIMIT_REACHED',
    `timestamp ${us} µs is past the last time an MCAP file stores exactly (${MAX_LOG_OFFSET_US} µs, about 834 days after the recording start)`,
    { file, url },
  );
}

/**
 * A publish time given in µs from the start, for `McapWriter.addMessage`: as an ns offset when it is near the log
 * time (exact), else as an absolute bigint (a zero ROS header stamp lies ~1.7e18 ns before the start, a producer's
 * far-future stamp past any offset); times before the Unix epoch are stored as 0 (publish_time is unsigned).
 */
export function publishTimeNs(us: number, logNs: number, startNs: bigint): number | bigint {
  const ns = us * 1000;
  // The offset is exact below 2^52; one that would reach before the epoch (a start near 1970) takes the bigint path.
  if (Math.abs(ns - logNs) < 2 ** 52 && Math.abs(ns) < 2 ** 52 && Number(startNs) + ns >= 0) return ns;
  const absolute = startNs + BigInt(us) * 1000n;
  return absolute < 0n ? 0n : absolute;
}
