import type { LiveSink } from './live-sink.js';
import type { TimeSource } from './ws-source.js';

/**
 * Records what a live server sends into `sink` until it closes: the urls `accept` keeps, stamped on arrival or by the
 * messages' own times (`time`); `topics` (`-u`) are subscribed by name where the protocol needs names (rosbridge).
 */
export type LiveSource = (
  sink: LiveSink,
  url: string,
  accept: (url: string) => boolean,
  time: TimeSource,
  topics?: readonly string[],
) => Promise<void>;

/** `--from <url>`: a Foxglove WebSocket (`ws://`, `wss://`) or a rosbridge server (`rosbridge://`, `rosbridge+wss://`). */
export const recordFromUrl: LiveSource = async (sink, url, accept, time, topics) => {
  if (url.startsWith('rosbridge')) {
    const { recordFromRosbridge } = await import('./rosbridge-source.js');
    return recordFromRosbridge(sink, url, accept, time, topics);
  }
  const { recordFromWebSocket } = await import('./ws-source.js');
  return recordFromWebSocket(sink, url, accept, time);
};
