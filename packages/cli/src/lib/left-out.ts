import { BagReader, type Info } from '@vlink/bag';
import { isUrl } from './bag-io.js';
import { CliError } from './errors.js';
import type { RecoveryFlags } from './recovery-flag.js';
import { isSplit, splitSegments } from './split-output.js';

/**
 * A split recording whose writer never closed (killed, power cut) has its last segment (two, when it died mid-split)
 * on disk but not in its manifest. A plain open reads only the listed segments (VLink, format reference §4.2), so a
 * copy of it would leave those frames out and mark itself complete. `clone` and `merge` refuse such an input before
 * writing anything, saying how many committed frames would be left out, unless `--try-to-fix` reads them too.
 */
export async function refuseLeftOut(src: string, info: Info, flags: RecoveryFlags): Promise<void> {
  if (flags.tryToFix === true || info.hasCompleted || isUrl(src) || !isSplit(src)) return;
  const names = splitSegments(src)?.unlisted ?? [];
  if (names.length === 0) return;
  // What a `--try-to-fix` read of it counts beyond the manifest: the committed frames of those segments.
  let extra: number | undefined;
  try {
    const recovered = await BagReader.create(src, { tryToFix: true });
    try {
      extra = recovered.getInfo().messageCount - info.messageCount;
    } finally {
      recovered.close();
    }
  } catch {
    extra = undefined; // they do not open even so: refused all the same, without a count
  }
  if (extra !== undefined && extra <= 0) return;
  const segments = `segment${names.length === 1 ? '' : 's'} ${names.join(', ')}`;
  const frames = extra === undefined ? 'frames' : `${extra} committed frame${extra === 1 ? '' : 's'}`;
  throw new CliError(
    `an interrupted recording: ${frames} in ${segments}, which its manifest does not list, would not be copied; pass --try-to-fix to copy them too, or run vlink-bag fix on it first`,
    src,
  );
}
