import { BagError } from '@vlink/bag';
import type { WSContext, WSEvents } from 'hono/ws';
import { z } from 'zod';
import { FrameEncoder } from '../messages/binary-frame.js';
import { messageText, sendIfOpen } from '../ws/socket.js';
import { ReplaySession, type ReplayConfig, type ReplaySource } from './replay-session.js';

const ms = z.number().finite().min(0);
/** The control messages a replay client sends (JSON text). */
export const ReplayCommand = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('play'),
    rate: z.number().finite().min(0).max(10_000).optional(),
    begin: ms.optional(),
    end: ms.optional(),
    urls: z.array(z.string()).optional(),
    times: z.number().int().optional(),
    paused: z.boolean().optional(),
  }),
  z.object({ op: z.literal('pause') }),
  z.object({ op: z.literal('resume') }),
  z.object({ op: z.literal('step') }),
  z.object({ op: z.literal('seek'), time: ms }),
  z.object({ op: z.literal('rate'), rate: z.number().finite().min(0).max(10_000) }),
  z.object({ op: z.literal('stop') }),
]);
export type ReplayCommand = z.infer<typeof ReplayCommand>;

export interface ReplaySocketOptions {
  source: ReplaySource;
  bufferedAmount(ws: WSContext<unknown>): number;
  /** Called when the socket opens and closes, so the app can close live sessions on shutdown. */
  track(ws: WSContext<unknown>, open: boolean): void;
}

/**
 * `WS /v1/bags/{id}/replay`: one ReplaySession per connection. Frames go out as binary messages in the layout of
 * `binary-frame.ts`; status, finished and error events as JSON text. A bad command answers an error event and keeps
 * the connection.
 */
export function replaySocket(options: ReplaySocketOptions): WSEvents<unknown> {
  let session: ReplaySession | undefined;
  const encoder = new FrameEncoder();
  const sendJson = (ws: WSContext<unknown>, value: unknown) => sendIfOpen(ws, JSON.stringify(value));
  const sendError = (ws: WSContext<unknown>, error: BagError) => sendJson(ws, { event: 'error', code: error.code, message: error.message });
  return {
    onOpen(_event, ws) {
      options.track(ws, true);
      session = new ReplaySession(options.source, {
        buffered: () => options.bufferedAmount(ws),
        frame: (frame) => sendIfOpen(ws, encoder.encode(frame)),
        status: (event) => sendJson(ws, { event: 'status', ...event }),
        finished: (interrupted, dropped) => sendJson(ws, { event: 'finished', interrupted, dropped }),
        error: (error) => sendError(ws, error),
      });
      sendJson(ws, { event: 'status', status: 'stopped', time: 0, rate: 1, dropped: 0 });
    },
    onMessage(event, ws) {
      const text = messageText(event.data);
      if (text === undefined) return sendError(ws, new BagError('INVALID_ARGUMENT', 'commands are JSON text messages'));
      let parsed: ReplayCommand;
      try {
        const result = ReplayCommand.safeParse(JSON.parse(text));
        if (!result.success) {
          const issue = result.error.issues[0];
          const where = issue && issue.path.length > 0 ? `"${issue.path.join('.')}": ` : '';
          throw new BagError('INVALID_ARGUMENT', `bad command: ${where}${issue?.message ?? 'invalid'}`);
        }
        parsed = result.data;
      } catch (error) {
        return sendError(ws, BagError.wrap(error, 'INVALID_ARGUMENT', 'bad command: not JSON'));
      }
      try {
        run(session!, parsed)?.catch((error: unknown) => sendError(ws, BagError.wrap(error, 'INTERNAL', `${parsed.op} failed`)));
      } catch (error) {
        sendError(ws, BagError.wrap(error, 'INTERNAL', `${parsed.op} failed`));
      }
    },
    onClose(_event, ws) {
      options.track(ws, false);
      session?.close();
    },
    onError(_event, ws) {
      options.track(ws, false);
      session?.close();
    },
  };
}

function run(session: ReplaySession, command: ReplayCommand): Promise<void> | void {
  switch (command.op) {
    case 'play': {
      const config: ReplayConfig = { rate: command.rate ?? 1, beginMs: command.begin ?? 0, times: command.times ?? 1, paused: command.paused ?? false };
      if (command.end !== undefined && command.end > 0) config.endMs = command.end;
      if (command.urls && command.urls.length > 0) config.urls = command.urls;
      if (config.endMs !== undefined && config.endMs < config.beginMs) throw new BagError('INVALID_ARGUMENT', 'bad command: "end" is before "begin"');
      return session.play(config);
    }
    case 'pause':
      return session.pause();
    case 'resume':
      return session.resume();
    case 'step':
      return session.step();
    case 'seek':
      return session.seek(command.time);
    case 'rate':
      return session.setRate(command.rate);
    case 'stop':
      return session.stop();
  }
}
