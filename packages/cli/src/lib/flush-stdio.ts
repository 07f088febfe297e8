/**
 * Resolves once stdout and then stderr have handed every byte written to them to the OS, so the process can exit
 * without cutting its output short. `write('', cb)` is not enough: Bun calls back an empty write at once while
 * earlier writes to a pipe are still queued (a 4 MiB `info --json` into a slow reader arrived cut at 64 KiB), and Bun
 * does not count queued bytes (`writableLength` stays 0). Ending the stream waits for the queue on Node, Bun and Deno.
 * Call it only right before exiting: nothing can be written after it.
 */
export async function flushStdio(): Promise<void> {
  await endStream(process.stdout);
  await endStream(process.stderr);
}

function endStream(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    // A closed reader (`| head`) destroys the stream: nothing is left to deliver.
    if (stream.destroyed || stream.writableFinished) return resolve();
    const done = () => resolve();
    stream.once('error', done);
    stream.once('close', done);
    stream.end(done);
  });
}
