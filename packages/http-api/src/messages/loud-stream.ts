/**
 * How long the last chunk gets to reach the socket before the response is aborted. Every adapter (node-server, Bun,
 * Deno) writes a chunk it has read at once; aborting in the same turn could still drop it.
 */
const FLUSH_MS = 20;

/** What the client receives as the last line of an NDJSON stream that failed (the `{"error":…}` line). */
export type ErrorLine = (error: unknown) => Uint8Array;

/**
 * Makes a body stream fail loudly:
 * - the first chunk is read before the response exists, so an error before any byte is a normal error response
 *   (status and JSON body) instead of a 200 with an empty body;
 * - an error after that aborts the response: the stream errors, which every adapter turns into a connection closed
 *   before the end of the chunked body, so the client sees an incomplete body and never mistakes truncated data for
 *   complete data. With `errorLine` (NDJSON) the typed error line is sent first;
 * - the error the adapter sees is a fresh one that names only the code: adapters log it, and a library's text or a
 *   server path must not reach a log line the operator did not ask for via a client's request.
 *
 * The returned stream has no buffer of its own (high-water mark 0), so when it is pulled after the error line was
 * read, the consumer has taken that line.
 */
export async function loudStream(
  source: ReadableStream<Uint8Array>,
  errorLine?: ErrorLine,
): Promise<ReadableStream<Uint8Array>> {
  const reader = source.getReader();
  // Throws (→ an error response) when the stream fails before its first byte.
  const first = await reader.read();
  let pending: Uint8Array | undefined = first.done ? undefined : first.value;
  let ended = first.done;
  let failed: unknown;
  let failing = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (failing) {
          await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
          controller.error(new Error(`response aborted after a read error (${codeOf(failed)})`));
          return;
        }
        if (pending) {
          controller.enqueue(pending);
          pending = undefined;
          return;
        }
        if (ended) {
          controller.close();
          return;
        }
        try {
          const step = await reader.read();
          if (step.done) controller.close();
          else controller.enqueue(step.value);
        } catch (error) {
          failed = error;
          failing = true;
          if (errorLine) controller.enqueue(errorLine(error));
          else {
            await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
            controller.error(new Error(`response aborted after a read error (${codeOf(error)})`));
          }
        }
      },
      cancel(reason) {
        ended = true;
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'INTERNAL';
}
