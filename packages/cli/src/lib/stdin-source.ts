import { createInterface } from 'node:readline';
import { CliError } from './errors.js';
import { LineError, parseLine } from './ndjson.js';
import type { LiveSink } from './live-sink.js';

/**
 * `record --stdin`: NDJSON lines in the `cat` shape (see ndjson.ts). A leading `meta` line sets the recording start
 * and tag (unless `-t` was given) and the url losses; `schema` lines are embedded; frames keep their timestamps
 * (a missing or negative one takes the writer's clock). The file is created when the first frame or schema arrives.
 * Ends at the end of input or when the session stops; a malformed line stops the recording with its line number.
 */
export async function recordFromStdin(session: LiveSink, accept: (url: string) => boolean): Promise<void> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  const stop = () => lines.close();
  void session.stopped.then(stop);
  let lineNo = 0;
  let losses: Record<string, number> = {};
  let overrides: { startTimestamp?: number; tagName?: string } = {};
  try {
    for await (const line of lines) {
      lineNo++;
      if (session.isStopping) break;
      if (session.onTriggerLine && line.startsWith('{"trigger"')) {
        let control: { trigger?: unknown };
        try {
          control = JSON.parse(line) as { trigger?: unknown };
        } catch {
          throw new CliError(`line ${lineNo}: a trigger line must be {"trigger":{…}}`, '<stdin>');
        }
        session.onTriggerLine(
          typeof control.trigger === 'object' && control.trigger ? (control.trigger as Record<string, unknown>) : {},
        );
        continue;
      }
      let parsed: ReturnType<typeof parseLine>;
      try {
        parsed = parseLine(line);
      } catch (error) {
        if (error instanceof LineError) throw new CliError(`line ${lineNo}: ${error.message}`, '<stdin>');
        throw error;
      }
      switch (parsed.kind) {
        case 'blank':
          break;
        case 'meta':
          if (session.isOpen) {
            session.log(`warning: line ${lineNo}: a meta line after the first frame only sets url losses`);
          } else {
            overrides = {
              startTimestamp: parsed.meta.startTimestamp,
              ...(parsed.meta.tagName ? { tagName: parsed.meta.tagName } : {}),
            };
          }
          losses = { ...losses, ...parsed.meta.losses };
          break;
        case 'schema':
          await session.open(overrides);
          session.pushSchema(parsed.schema);
          break;
        case 'frame':
          if (!accept(parsed.frame.url)) break;
          await session.open(overrides);
          // Waits while the writer's queue is full: stdin is paced instead of losing frames.
          await session.write(parsed.frame);
          break;
      }
    }
    // An empty input still makes a valid (empty) bag.
    await session.open(overrides);
    for (const [url, loss] of Object.entries(losses)) if (accept(url)) session.setUrlLoss(url, loss);
  } finally {
    lines.close();
  }
}
