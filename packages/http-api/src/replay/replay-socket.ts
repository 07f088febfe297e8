import { BagError } from '@vlink/bag';
import type { WSContext, WSEvents } from 'hono/ws';
import { z } from 'zod';
import { FrameEncoder } from '@vlink/bag-decode';
import { messageText, sendIfOpen } from '../ws/socket.js';
import type { ControlId } from './answers.js';
import { ReplaySession, type ReplayConfig, type ReplaySource } from './replay-session.js';

/** Longest string id a control may carry: an id is echoed on events, so it stays small (a UUID is 36). */
export const CONTROL_ID_MAX_LENGTH = 64;
/** A control's optional client id (see `Answers`). */
export const ControlIdSchema = z.union([z.string().max(CONTROL_ID_MAX_LENGTH), z.number().finite()], {
  error: `must be a string of at most ${CONTROL_ID_MAX_LENGTH} characters or a number`,
});
const ms = z.number().finite().min(0);
const id = ControlIdSchema.optional();
/** The control messages a replay client sends (JSON text). */
export const ReplayCommand = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('play'),
    id,
    rate: z.number().finite().min(0).max(10_000).optional(),
    begin: ms.optional(),
    end: ms.optional(),
    urls: z.array(z.string()).optional(),
    times: z.number().int().optional(),
    paused: z.boolean().optional(),
    timeBase: z.enum(['log', 'publish']).optional(),
  }),
  z.object({ op: z.literal('pause'), id }),
  z.object({ op: z.literal('resume'), id }),
  z.object({ op: z.literal('step'), id }),
  z.object({ op: z.literal('seek'), id, time: ms }),
  z.object({ op: z.literal('rate'), id, rate: z.number().finite().min(0).max(10_000) }),
  z.object({ op: z.literal('stop'), id }),
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
 * `@vlink/bag-decode`'s `binary-frame.ts`; status, finished and error events as JSON text. A bad command answers an
 * error event and keeps the connection. A command's `id` is echoed on the status that answers it, or on the error
 * event if it fails (also when only the rest of the command is malformed, so a client waiting for that id hears
 * back).
 */
export function replaySocket(options: ReplaySocketOptions): WSEvents<unknown> {
  let session: ReplaySession | undefined;
  const encoder = new FrameEncoder();
  const sendJson = (ws: WSContext<unknown>, value: unknown) => sendIfOpen(ws, JSON.stringify(value));
  const sendError = (ws: WSContext<unknown>, error: BagError, id?: ControlId) =>
    sendJson(ws, { event: 'error', code: error.code, message: error.message, ...(id !== undefined && { id }) });
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
      // Every error goes out in its command's turn, after the answers owed to the commands before it (`refuse`).
      const refuse = (error: BagError, id?: ControlId) =>
        void session!.refuse(error).catch((refused: BagError) => sendError(ws, refused, id));
      const text = messageText(event.data);
      if (text === undefined) return refuse(new BagError('INVALID_ARGUMENT', 'commands are JSON text messages'));
      let parsed: ReplayCommand;
      let id: ControlId | undefined;
      try {
        const json: unknown = JSON.parse(text);
        id = idOf(json);
        const result = ReplayCommand.safeParse(json);
        if (!result.success) {
          const issue = result.error.issues[0];
          const where = issue && issue.path.length > 0 ? `"${issue.path.join('.')}": ` : '';
          throw new BagError('INVALID_ARGUMENT', `bad command: ${where}${issue?.message ?? 'invalid'}`);
        }
        parsed = result.data;
      } catch (error) {
        return refuse(BagError.wrap(error, 'INVALID_ARGUMENT', 'bad command: not JSON'), id);
      }
      const failed = (error: unknown) => sendError(ws, BagError.wrap(error, 'INTERNAL', `${parsed.op} failed`), id);
      try {
        run(session!, parsed)?.catch(failed);
      } catch (error) {
        refuse(BagError.wrap(error, 'INTERNAL', `${parsed.op} failed`), id);
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

/** The id of a command that may be malformed otherwise; undefined when absent or itself invalid. */
function idOf(json: unknown): ControlId | undefined {
  if (typeof json !== 'object' || json === null || !('id' in json)) return undefined;
  const result = ControlIdSchema.safeParse(json.id);
  return result.success ? result.data : undefined;
}

function run(session: ReplaySession, command: ReplayCommand): Promise<void> | void {
  const { id } = command;
  switch (command.op) {
    case 'play': {
      const config: ReplayConfig = {
        rate: command.rate ?? 1,
        beginMs: command.begin ?? 0,
        times: command.times ?? 1,
        paused: command.paused ?? false,
      };
      if (command.end !== undefined && command.end > 0) config.endMs = command.end;
      if (command.urls && command.urls.length > 0) config.urls = command.urls;
      if (command.timeBase === 'publish') config.timeBase = 'publish';
      if (config.endMs !== undefined && config.endMs < config.beginMs)
        throw new BagError('INVALID_ARGUMENT', 'bad command: "end" is before "begin"');
      return session.play(config, id);
    }
    case 'pause':
      return session.pause(id);
    case 'resume':
      return session.resume(id);
    case 'step':
      return session.step(id);
    case 'seek':
      return session.seek(command.time, id);
    case 'rate':
      return session.setRate(command.rate, id);
    case 'stop':
      return session.stop(id);
  }
}
