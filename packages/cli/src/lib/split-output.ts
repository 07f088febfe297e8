import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { extensionOf } from '@vlink/bag';
import { listedSegments, stemOf, unlistedSegmentNames } from '@vlink/bag-core/internal';
import { realPathOf } from './real-path.js';

/*
 * The files a split recording (`.vdbx`, `.vcapx`) consists of, as the output guard needs them: the segments a
 * manifest lists (which the writer deletes when it replaces that manifest, format reference §4.2), those an
 * interrupted recording left unlisted (which `--try-to-fix` reads), and the numbered names a new recording writes.
 */

export function isSplit(path: string): boolean {
  return extensionOf(path).endsWith('x');
}

/** `.vdb` for `.vdbx`, `.vcap` for `.vcapx`. */
export function segmentExtension(path: string): string {
  return extensionOf(path).slice(0, -1);
}

/**
 * The segment names of the split bag at `path`: those its manifest lists and, when it is not complete, those its
 * interrupted recording left out of it (in recording order). Undefined for single files and unreadable manifests.
 */
export function splitSegments(path: string): { listed: string[]; unlisted: string[] } | undefined {
  if (!isSplit(path)) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const listed = listedSegments(text)?.names ?? [];
  const unlisted = isComplete(text)
    ? []
    : unlistedSegmentNames(fileNames(dirname(path)), basename(path), segmentExtension(path), listed);
  return { listed, unlisted };
}

/** Real paths of every segment `splitSegments` names (none for single files or unreadable manifests). */
export function segmentsOf(path: string): string[] {
  const segments = splitSegments(path);
  if (!segments) return [];
  const dir = dirname(realPathOf(path));
  return [...segments.listed, ...segments.unlisted].map((name) => realPathOf(resolve(dir, name)));
}

/**
 * The files in the manifest's directory at the names a new recording written to `path` gives its segments
 * (`<stem>.<n><ext>`, n from 1): any of them may be overwritten, as the number of segments is not known before.
 */
export function numberedSegmentFiles(path: string): string[] {
  if (!isSplit(path)) return [];
  const dir = dirname(resolve(path));
  const stem = stemOf(basename(path));
  const ext = segmentExtension(path).toLowerCase();
  return fileNames(dir)
    .filter((name) => {
      if (!name.startsWith(`${stem}.`) || !name.toLowerCase().endsWith(ext)) return false;
      return /^[1-9]\d*$/.test(name.slice(stem.length + 1, name.length - ext.length));
    })
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((name) => resolve(dir, name));
}

function isComplete(text: string): boolean {
  try {
    const root = JSON.parse(text) as { VLinkHeader?: { complete?: unknown } };
    return root.VLinkHeader?.complete !== false;
  } catch {
    return true;
  }
}

function fileNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}
