import type { Info, SchemaData } from '@vlink/bag';
import type { WSContext, WSEvents } from 'hono/ws';
import { ReplaySession, type ReplaySource } from '../replay/replay-session.js';
import { foxgloveOffer } from './channels.js';
import { FoxgloveConnection, StatusLevel } from './foxglove-connection.js';

export { assertFoxgloveProtocol, FOXGLOVE_SUBPROTOCOL } from './foxglove-connection.js';

/** The replay starts this long after the last subscribe of the first burst. */
const START_DEBOUNCE_MS = 100;

export interface FoxgloveOptions {
  id: string;
  info: Info;
  schemas: readonly SchemaData[];
  source: ReplaySource;
  /** Replay speed (0 = as fast as the client reads), window (ms) and looping, from the query string. */
  rate: number;
  beginMs: number;
  endMs?: number;
  loop: boolean;
  serverName: string;
  bufferedAmount(ws: WSContext<unknown>): number;
  track(ws: WSContext<unknown>, open: boolean): void;
}

/**
 * `WS /v1/bags/{id}/foxglove`: a `FoxgloveConnection` (the protocol) fed by a `ReplaySession` of its own. The replay
 * starts once the first burst of `subscribe` messages has settled (100 ms after the last one), at the pace given by
 * `?rate=` (default 1); a slow client's drops, the end of the recording and errors become `status` messages.
 * Playback control is not part of protocol 0.8, so it is steered by the query.
 */
export function foxgloveSocket(options: FoxgloveOptions): WSEvents<unknown> {
  const offer = foxgloveOffer({
    serverName: options.serverName,
    bag: options.id,
    info: options.info,
    schemas: options.schemas,
  });
  let connection: FoxgloveConnection | undefined;
  let session: ReplaySession | undefined;
  let reportedDrops = 0;

  let started = false;
  let startTimer: ReturnType<typeof setTimeout> | undefined;
  const start = () => {
    startTimer = undefined;
    if (started || !session) return;
    started = true;
    const config = {
      rate: options.rate,
      beginMs: options.beginMs,
      times: options.loop ? 0 : 1,
      paused: false,
    } as const;
    session.play(options.endMs !== undefined ? { ...config, endMs: options.endMs } : { ...config });
  };
  // Clients subscribe one message per channel: wait for the burst to settle so a fast replay does not start before
  // the last subscription of the burst arrives.
  const subscribed = () => {
    if (started) return;
    if (startTimer !== undefined) clearTimeout(startTimer);
    startTimer = setTimeout(start, START_DEBOUNCE_MS);
  };
  const end = (ws: WSContext<unknown>) => {
    options.track(ws, false);
    if (startTimer !== undefined) clearTimeout(startTimer);
    session?.close();
  };

  return {
    onOpen(_event, ws) {
      options.track(ws, true);
      const client = new FoxgloveConnection(ws, offer, subscribed);
      connection = client;
      session = new ReplaySession(options.source, {
        buffered: () => options.bufferedAmount(ws),
        frame: (frame) => client.sendFrame(frame),
        status: (event) => {
          if (event.dropped > reportedDrops) {
            reportedDrops = event.dropped;
            client.status(StatusLevel.WARNING, `client too slow: ${event.dropped} messages dropped so far`);
          }
        },
        finished: (interrupted) => {
          if (!interrupted) client.status(StatusLevel.INFO, 'end of recording');
        },
        error: (error) => client.status(StatusLevel.ERROR, `${error.code}: ${error.message}`),
      });
      client.open(`${options.id}@${Date.now()}`);
    },
    onMessage(event) {
      connection?.receive(event.data);
    },
    onClose(_event, ws) {
      end(ws);
    },
    onError(_event, ws) {
      end(ws);
    },
  };
}
