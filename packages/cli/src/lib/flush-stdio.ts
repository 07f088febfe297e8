/**
 * Resolves once stdout and then stderr have handed every byte written to them to the OS, so the process can exit
 * without cutting its output short. Bun needs the stream ended: it calls back an empty `write('', cb)` at once while
 * earlier writes to a pipe are still queued (a 4 MiB `info --json` into a slow reader arrived cut at 64 KiB), and it
 * does not count queued bytes (`writableLength` stays 0). Node must not end it: its stdout on a socket (what a parent
 * spawning with `stdio: 'pipe'` hands over) is shut down for every process sharing it, so a server started by a script
 * that goes on writing killed that script's output (SIGPIPE); Node writes pipes and files synchronously, and the empty
 * write's callback comes after what was written before. Deno ends it like Bun, safely.
 * Call it only right before exiting: nothing can be written after it.
 */
export async function flushStdio(): Promise<void> {
  const end = 'Bun' in globalThis || 'Deno' in globalThis;
  await settle(process.stdout, end);
  await settle(process.stderr, end);
}

function settle(stream: NodeJS.WriteStream, end: boolean): Promise<void> {
  return new Promise((resolve) => {
    // A closed reader (`| head`) destroys the stream: nothing is left to deliver.
    if (stream.destroyed || stream.writableFinished) return resolve();
    const done = () => resolve();
    stream.once('error', done);
    stream.once('close', done);
    if (end) stream.end(done);
    else stream.write('', done);
  });
}
