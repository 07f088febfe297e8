import type { LiveSink } from './live-sink.js';
import type { TimeSource } from './ws-source.js';

/** `--from <url>`: a Foxglove WebSocket (`ws://`, `wss://`) or a rosbridge server (`rosbridge://`, `rosbridge+wss://`). */
export async function recordFromUrl(
  sink: LiveSink,
  url: string,
  accept: (url: string) => boolean,
  time: TimeSource,
  topics?: readonly string[],
): Promise<void> {
  if (url.startsWith('rosbridge')) {
    const { recordFromRosbridge } = await import('./rosbridge-source.js');
    return recordFromRosbridge(sink, url, accept, time, topics);
  }
  const { recordFromWebSocket } = await import('./ws-source.js');
  return recordFromWebSocket(sink, url, accept, time);
}
