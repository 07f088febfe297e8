import { BagError, type BagReader, countsForFrequency, type Frame, type Info } from '@vlink/bag-core';
import { PayloadDecoder } from '@vlink/bag-decode';
import { UrlLayout } from './columns.js';
import type { MatchPolicy, ResolvedAlignOptions } from './options.js';

/** How many messages of a url are tried for one that decodes before its columns are given up on. */
const LAYOUT_TRIES = 64;

/** The urls an alignment reads, with the decoder and each url's columns. */
export interface AlignPlan {
  info: Info;
  decoder: PayloadDecoder;
  /** The base url (absent for a fixed-rate base). */
  baseUrl: string | undefined;
  /** The aligned urls in output order, with their policies. */
  aligned: Array<{ url: string; policy: MatchPolicy }>;
  /** Each read url's columns; absent for a url without any data message (all its rows are missing). */
  layouts: Map<string, UrlLayout>;
}

const dataUrls = (info: Info): string[] => {
  const seen = new Set<string>();
  for (const meta of info.urls) {
    if (meta.type !== 'Method' && meta.count > 0) seen.add(meta.url);
  }
  return [...seen];
};

/**
 * Picks the urls, checks that they exist and decode, and takes each url's columns from its first message that
 * decodes. A url whose payloads no decoder handles (flatbuffers, raw bytes) is an error naming it: its columns would
 * be empty, and a silently empty column is worse than a refusal.
 */
export async function planAlignment(reader: BagReader, options: ResolvedAlignOptions): Promise<AlignPlan> {
  const info = reader.getInfo();
  const known = new Set(info.urls.map((u) => u.url));
  const baseUrl = 'url' in options.base ? options.base.url : undefined;
  if (baseUrl !== undefined && !known.has(baseUrl)) {
    throw new BagError('NOT_FOUND', `the base url ${baseUrl} is not in the bag`, { file: reader.path });
  }
  const aligned =
    options.match.size > 0
      ? [...options.match].map(([url, policy]) => ({ url, policy }))
      : dataUrls(info)
          .filter((url) => url !== baseUrl)
          .map((url) => ({ url, policy: options.defaultMatch }));
  for (const { url } of aligned) {
    if (!known.has(url)) throw new BagError('NOT_FOUND', `the url ${url} is not in the bag`, { file: reader.path });
  }
  if (baseUrl === undefined && aligned.length === 0) {
    throw new BagError('INVALID_ARGUMENT', 'a fixed-rate base needs at least one url to align', { file: reader.path });
  }
  const decoder = new PayloadDecoder({ schemas: reader.getSchemas(), urls: info.urls, alwaysEmitImplicit: true });
  const layouts = new Map<string, UrlLayout>();
  for (const url of baseUrl === undefined ? aligned.map((a) => a.url) : [baseUrl, ...aligned.map((a) => a.url)]) {
    const layout = await firstLayout(reader, decoder, url, options.signal);
    if (layout) layouts.set(url, layout);
  }
  return { info, decoder, baseUrl, aligned, layouts };
}

async function firstLayout(
  reader: BagReader,
  decoder: PayloadDecoder,
  url: string,
  signal: AbortSignal | undefined,
): Promise<UrlLayout | undefined> {
  let tries = 0;
  let lastError: BagError | undefined;
  for await (const frame of reader.frames({ filterUrls: [url], ...(signal ? { signal } : {}) })) {
    if (!countsForFrequency(frame.actionType)) continue;
    const decoded = decoder.decode(frame as Frame);
    if (decoded.kind !== 'hex') return new UrlLayout(url, decoded.value);
    if (decoded.error === undefined) {
      const encoding = decoder.encodingOf(frame) ?? 'raw bytes';
      throw new BagError('NOT_SUPPORTED', `the payloads of ${url} (${encoding}, ${frame.serType}) do not decode`, {
        url,
      });
    }
    lastError = decoded.error;
    if (++tries >= LAYOUT_TRIES) break;
  }
  if (lastError) {
    throw new BagError(lastError.code, `none of the first ${tries} messages of ${url} decodes: ${lastError.reason}`, {
      url,
      cause: lastError,
    });
  }
  return undefined;
}
