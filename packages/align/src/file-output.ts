import { open, rename, rm, writeFile } from 'node:fs/promises';
import { BagError, type BagReader } from '@vlink/bag-core';
import { type AlignDescription, alignChunks } from './align.js';
import { ALIGN_FORMATS, type AlignFormat, type AlignOptions } from './options.js';

/** The format a file name asks for (`.parquet`, `.csv`, `.ndjson`/`.jsonl`), else undefined. */
export function formatOfPath(path: string): AlignFormat | undefined {
  const ext = /\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase();
  if (ext === 'jsonl') return 'ndjson';
  return (ALIGN_FORMATS as readonly string[]).includes(ext ?? '') ? (ext as AlignFormat) : undefined;
}

/** Where the JSON description of an output file goes: beside it, `<output>.json`. */
export const descriptionPath = (outputPath: string): string => `${outputPath}.json`;

/**
 * Aligns one bag (one episode) into `outputPath` and writes the description to `<outputPath>.json`. The format is
 * `format`, else the file's extension. The file is written under a temporary name and renamed when complete, so a
 * failed or aborted alignment leaves no half file (and no earlier file of that name is lost until then).
 */
export async function alignToFile(
  reader: BagReader,
  options: AlignOptions,
  outputPath: string,
  format: AlignFormat | undefined = formatOfPath(outputPath),
): Promise<AlignDescription> {
  if (format === undefined) {
    throw new BagError('INVALID_ARGUMENT', `cannot tell the format of ${outputPath}: give one (parquet, csv, ndjson)`);
  }
  const partial = `${outputPath}.partial-${process.pid}`;
  const handle = await open(partial, 'w').catch((error) => {
    throw BagError.wrap(error, 'IO_ERROR', `cannot create ${outputPath}`, { file: outputPath });
  });
  let description: AlignDescription | undefined;
  try {
    const chunks = alignChunks(reader, options, format);
    for (;;) {
      const next = await chunks.next();
      if (next.done) {
        description = next.value;
        break;
      }
      await handle.write(next.value);
    }
    await handle.close();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  }
  await rename(partial, outputPath);
  await writeFile(descriptionPath(outputPath), `${JSON.stringify(description, null, 2)}\n`);
  return description;
}
