import { BagError } from '../errors.js';
import { actionText, parseAction, type UrlKind } from '../model/action-type.js';
import type { UrlMeta } from '../model/info.js';
import { parseSchemaType, resolveSchemaType } from '../model/schema-type.js';
import { parseVlinkDate } from '../model/time-format.js';
import type { ManifestFlavor, ManifestHeader } from './manifest.js';
import { parseSegmentFacts, type SegmentFacts } from './segment-facts.js';
import { isBareFileName } from './split-files.js';

/** A manifest as a reader uses it (format reference §4.4), with VLink's defaults applied. */
export interface ParsedManifest extends Omit<ManifestHeader, 'major' | 'minor' | 'patch'> {
  /** Undefined when the manifest has no `major`; the reader then reports the first segment's version. */
  version: { major: number; minor: number; patch: number } | undefined;
  urls: UrlMeta[];
  /** Bare segment names, manifest order. */
  files: string[];
  /** What each listed segment holds (vlink-bag `VLinkBagSegments`), `files` order; undefined when the key is absent. */
  segments: SegmentFacts[] | undefined;
  /**
   * Bookkeeping values that cannot be true (a count of −5 or 1e300, a fractional size): each is read as absent, and
   * readers compute the totals from the segments instead (`hasCompleted` false, `check` fails, `fix` rewrites them).
   */
  problems: string[];
}

const URL_KINDS = new Set<string>(['Method', 'Event', 'Field', 'Unknown']);

/**
 * Parses and validates a manifest. Garbled JSON, a wrong shape, a key of the wrong type, or a segment entry that is a
 * path (`..`, absolute, with directories) throw `CORRUPT_FILE` naming the file and the offending entry. Defaults as
 * VLink's reader: tag `"Empty"`, complete true, timezone 480, `start_timestamp` from `date` when absent.
 */
export function parseManifest(text: string, file: string, flavor: ManifestFlavor): ParsedManifest {
  const root = parseJsonObject(text, file);
  const header = root['VLinkHeader'];
  if (!isObject(header)) throw corrupt('has no VLinkHeader object', file);
  const files = root['VLinkFiles'];
  if (!Array.isArray(files)) throw corrupt('has no VLinkFiles array', file);
  const listed = new Set<string>();
  files.forEach((name, i) => {
    if (!isBareFileName(name)) {
      throw corrupt(
        `VLinkFiles[${i}] ${JSON.stringify(name)} is not a plain file name in the manifest's directory`,
        file,
      );
    }
    // Writers never list a segment twice; a manifest that does would make readers open (and read) it once per entry.
    if (listed.has(name)) throw corrupt(`VLinkFiles[${i}] ${JSON.stringify(name)} is listed twice`, file);
    listed.add(name);
  });
  const urlsValue = root['VLinkUrls'] ?? [];
  if (!Array.isArray(urlsValue)) throw corrupt('VLinkUrls is not an array', file);

  const problems: string[] = [];
  const h = new Fields(header, 'VLinkHeader', file, problems);
  const major = h.int('major');
  const date = h.str('date') ?? '';
  const urls = urlsValue.map((entry, i) => parseUrl(entry, `VLinkUrls[${i}]`, file, flavor, problems));
  return {
    version: major === undefined ? undefined : { major, minor: h.int('minor') ?? 0, patch: h.int('patch') ?? 0 },
    count: h.count('count') ?? 0,
    duration: h.count('duration') ?? 0,
    accuracy: h.str('accuracy') ?? '',
    compress: h.str('compress') ?? '',
    process: h.str('process') ?? '',
    date,
    tag: h.str('tag') ?? 'Empty',
    complete: h.bool('complete') ?? true,
    timezone: h.int('timezone') ?? 480,
    startTimestamp: h.int('start_timestamp') ?? parseVlinkDate(date) ?? 0,
    splitBySize: h.int('split_by_size') ?? 0,
    splitByTime: h.int('split_by_time') ?? 0,
    urls,
    files: files as string[],
    segments: parseSegmentFacts(root['VLinkBagSegments'], files as string[], problems),
    problems,
  };
}

/**
 * The segment names an existing manifest lists, for the writer's clean-up of an old recording (format reference §4.2 step 5):
 * only bare names; undefined when the text is not a manifest at all (the caller warns and goes on).
 */
export function listedSegments(text: string): { names: string[]; skipped: unknown[] } | undefined {
  let root: unknown;
  try {
    root = JSON.parse(stripBom(text));
  } catch {
    return undefined;
  }
  if (!isObject(root) || !Array.isArray(root['VLinkFiles'])) return undefined;
  const names: string[] = [];
  const skipped: unknown[] = [];
  for (const name of root['VLinkFiles'] as unknown[]) (isBareFileName(name) ? names : skipped).push(name);
  return { names, skipped };
}

export function parseJsonObject(text: string, file: string): Record<string, unknown> {
  let root: unknown;
  try {
    root = JSON.parse(stripBom(text));
  } catch (error) {
    throw new BagError(
      'CORRUPT_FILE',
      `manifest is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      { file, cause: error },
    );
  }
  if (!isObject(root)) throw corrupt('is not a JSON object', file);
  return root;
}

function parseUrl(entry: unknown, where: string, file: string, flavor: ManifestFlavor, problems: string[]): UrlMeta {
  if (!isObject(entry)) throw corrupt(`${where} is not an object`, file);
  const f = new Fields(entry, where, file, problems);
  const ser = f.str('ser') ?? '';
  const type = f.str('type') ?? 'Unknown';
  const meta: UrlMeta = {
    index: f.int('index') ?? 0,
    url: f.str('url') ?? '',
    type: (URL_KINDS.has(type) ? type : 'Unknown') as UrlKind,
    ser,
    schemaType: resolveSchemaType(parseSchemaType(f.str('encoding')), ser),
    count: f.count('count') ?? 0,
    size: f.count('size') ?? 0,
    loss: f.num('loss') ?? 0,
    freq: f.num('freq') ?? 0,
  };
  if (flavor === 'vcapx') meta.action = actionText(parseAction(f.str('action')));
  return meta;
}

/** Typed access to one JSON object's keys: absent (or null) → undefined, present with the wrong type → CORRUPT_FILE. */
class Fields {
  constructor(
    private readonly object: Record<string, unknown>,
    private readonly where: string,
    private readonly file: string,
    private readonly problems: string[],
  ) {}

  /** A count, size or duration: a non-negative safe integer; anything else is noted and read as absent. */
  count(key: string): number | undefined {
    const v = this.num(key);
    if (v === undefined) return undefined;
    if (Number.isSafeInteger(v) && v >= 0) return v;
    this.problems.push(`${this.where}.${key} is ${v}, not a count`);
    return undefined;
  }

  num(key: string): number | undefined {
    const v = this.object[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw this.wrong(key, 'a number');
    return v;
  }

  int(key: string): number | undefined {
    const v = this.num(key);
    return v === undefined ? undefined : Math.trunc(v);
  }

  str(key: string): string | undefined {
    const v = this.object[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw this.wrong(key, 'a string');
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.object[key];
    if (v === undefined || v === null) return undefined;
    // VLink writes a bool; a 0/1 (the SQLite header's spelling) means the same.
    if (typeof v === 'number') return v !== 0;
    if (typeof v !== 'boolean') throw this.wrong(key, 'a boolean');
    return v;
  }

  private wrong(key: string, what: string): BagError {
    return corrupt(`${this.where}.${key} is not ${what}`, this.file);
  }
}

function corrupt(what: string, file: string): BagError {
  return new BagError('CORRUPT_FILE', `manifest ${what}`, { file });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
