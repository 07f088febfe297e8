import { BagError } from '../errors.js';
import { ActionType } from './action-type.js';
import type { Frame } from './frame.js';
import { SchemaType } from './schema-type.js';

/**
 * The companion-metadata convention (format reference §1.3): auxiliary time information about a frame of url `U` —
 * the raw device time, its unit and clock domain, the receive times and versions of the components a sample was
 * assembled from, a submit's start and end — is recorded as a separate frame on url `U/meta`, a JSON object, with the
 * same log and publish times as the frame it describes. Readers pair the two by url and log time; tools that do not
 * know the convention see an ordinary JSON url. Keys are the producer's; `CompanionMeta` names the common ones.
 */
export const COMPANION_META_SUFFIX = '/meta';
/** The ser type of companion-metadata frames. */
export const COMPANION_META_SER = 'json';

/** Common keys of a companion-metadata object; any other JSON-serialisable key may be added. */
export interface CompanionMeta {
  /** The device's own timestamp, as the device counts it. */
  deviceTime?: number;
  /** Unit of `deviceTime` (`ns`, `us`, `ms`, `s`, `ticks`, …). */
  deviceTimeUnit?: string;
  /** Clock domain of `deviceTime` (`camera-0`, `ptp`, `monotonic`, …). */
  clockDomain?: string;
  /**
   * Per component of a composite sample: when it was sampled at its source and received (µs since recording start),
   * and its version.
   */
  components?: Record<string, { sampleUs?: number; receivedUs?: number; version?: number | string }>;
  /** A submit's start and end (µs since recording start) and its result (`ActionRecorder`). */
  submit?: { startUs: number; endUs: number; result: 'full' | 'partial' | 'failed'; detail?: string };
  [key: string]: unknown;
}

/** The url companion metadata of `url` is recorded on. */
export function companionMetaUrl(url: string): string {
  return url + COMPANION_META_SUFFIX;
}

/** Whether `url` is a companion-metadata url (`…/meta`), and then of which url. */
export function companionMetaOf(url: string): string | undefined {
  return url.endsWith(COMPANION_META_SUFFIX) && url.length > COMPANION_META_SUFFIX.length
    ? url.slice(0, -COMPANION_META_SUFFIX.length)
    : undefined;
}

const encoder = new TextEncoder();

/**
 * The companion frame describing `frame`: url `frame.url + '/meta'`, the JSON of `meta` as payload, the frame's log
 * and publish times and action. `frame.timestamp` must be resolved (≥ 0: the pair is matched by it), so stamp the
 * frame yourself (or push it with `pushDurable` and use the time it resolves to).
 */
export function companionMetaFrame(
  frame: Pick<Frame, 'url' | 'timestamp' | 'publishTime' | 'actionType'>,
  meta: CompanionMeta,
): Frame {
  if (!(frame.timestamp >= 0) || !Number.isFinite(frame.timestamp))
    throw new BagError(
      'INVALID_ARGUMENT',
      `companion metadata needs the frame's resolved log time (≥ 0), got ${frame.timestamp}`,
      { url: frame.url },
    );
  let json: string;
  try {
    json = JSON.stringify(meta);
  } catch (error) {
    throw new BagError('INVALID_ARGUMENT', 'companion metadata must be JSON-serialisable', {
      url: frame.url,
      cause: error,
    });
  }
  if (typeof json !== 'string' || !json.startsWith('{'))
    throw new BagError('INVALID_ARGUMENT', 'companion metadata must be a JSON object', { url: frame.url });
  const out: Frame = {
    timestamp: frame.timestamp,
    url: companionMetaUrl(frame.url),
    data: encoder.encode(json),
    serType: COMPANION_META_SER,
    schemaType: SchemaType.Raw,
    actionType: frame.actionType ?? ActionType.Publish,
  };
  if (frame.publishTime !== undefined) out.publishTime = frame.publishTime;
  return out;
}

/** The metadata object of a companion frame's payload; throws `CORRUPT_DATA` when it is not a JSON object. */
export function parseCompanionMeta(frame: Pick<Frame, 'url' | 'data'>): CompanionMeta {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(frame.data));
  } catch (error) {
    throw new BagError('CORRUPT_DATA', 'companion metadata is not JSON', { url: frame.url, cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BagError('CORRUPT_DATA', 'companion metadata is not a JSON object', { url: frame.url });
  return value as CompanionMeta;
}
