import {
  type BagReader,
  type BagWriter,
  type BagWriterOptions,
  type CarriedRecords,
  extensionOf,
  type Info,
  type InfoMetadata,
  isProblemsRecord,
} from '@vlink/bag';

/**
 * What `clone` and `merge` copy from a source besides its frames: the recording header (tag, process name,
 * timezone; `--no-header` leaves the copy with this machine's), and the records only plain `.mcap` can store (the
 * source's metadata records, attachments and per-url encodings).
 */
export function headerOptions(info: Info, keepHeader: boolean): Partial<BagWriterOptions> {
  if (!keepHeader) return {};
  return { tagName: info.tagName, processName: info.processName, timezone: info.timezone };
}

/**
 * The source's metadata records a copy carries: not its reader's account of the damage it read around (`*.problems`),
 * which the copy's warnings told, and which would make the copy, holding what was read, look damaged to `info`.
 */
const carriedMetadata = (info: Info): InfoMetadata[] => (info.metadata ?? []).filter((m) => !isProblemsRecord(m));

/** The source's metadata records, attachments (bytes read now) and url encodings, for a `.mcap` target. */
export function carriedRecords(reader: BagReader, info: Info, keepUrl: (url: string) => boolean): CarriedRecords {
  const urlEncodings: Record<string, string> = {};
  for (const meta of info.urls) if (meta.encoding && keepUrl(meta.url)) urlEncodings[meta.url] ??= meta.encoding;
  const metadata = carriedMetadata(info);
  return {
    ...(metadata.length > 0 ? { metadata } : {}),
    ...(info.attachments?.length
      ? { attachments: info.attachments.map((a) => ({ ...a, data: reader.getAttachment(a.index) })) }
      : {}),
    urlEncodings,
  };
}

/**
 * The source's counters by cause (`Info.counters`: frames it dropped, and what its application counted with
 * `writer.count`), added to the copy's for the urls it keeps. Added, so that a merge sums them per url and cause;
 * a time window keeps the recording's counts (they say what its recording lost, not when).
 */
export function carryCounters(writer: BagWriter, info: Info, keepUrl: (url: string) => boolean): void {
  for (const [url, causes] of Object.entries(info.counters ?? {})) {
    if (!keepUrl(url)) continue;
    for (const [cause, n] of Object.entries(causes))
      if (Number.isSafeInteger(n) && n > 0 && url && cause) writer.count(url, cause, n);
  }
}

/** Tells the user what a target other than `.mcap` does not store (nothing is dropped silently). */
export function warnUncarried(verb: string, dst: string, info: Info, quiet: boolean | undefined): void {
  if (quiet || extensionOf(dst) === '.mcap') return;
  const records = carriedMetadata(info).length;
  const attachments = info.attachments?.length ?? 0;
  if (records === 0 && attachments === 0) return;
  process.stderr.write(
    `vlink-bag ${verb}: ${dst}: warning: ${records} metadata record(s) and ${attachments} attachment(s) of ${info.path} are not stored (only .mcap keeps them)\n`,
  );
}
