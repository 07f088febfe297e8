import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ActionType, BagWriter, SchemaType, type Frame, type WriterConfig } from '@vlink/bag';
import { fixturePath, foreignRecordings } from '@vlink/fixtures';
import { patternBytes, SAMPLE_PROTO_SCHEMA } from '@vlink/bag-core/testing';

/**
 * The valid recordings the fuzz harness mutates: a fixed set of frames (four urls, every action, payloads of varied
 * size) recorded with each format's interesting configurations (compression, chunking, CRCs, splitting into
 * several segments), so a mutation can land in every kind of structure a reader meets.
 */
export type FuzzFormat = '.vdb' | '.vcap' | '.vdbx' | '.vcapx' | 'foreign';
export const FUZZ_FORMATS: readonly FuzzFormat[] = ['.vdb', '.vcap', '.vdbx', '.vcapx', 'foreign'];

/** A valid recording: its files by name (`main` is the bag, or the manifest of a split recording). */
export interface FuzzBase {
  name: string;
  main: string;
  files: Map<string, Uint8Array>;
  /** Every message sits in a chunk with a CRC: no read may return a frame that differs from what was written. */
  checksummed: boolean;
  /** How many frames were written into it, where the harness wrote it (not for the foreign fixtures). */
  written?: number;
}

const START = 1_700_000_000_000;

function fuzzFrames(): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < 160; i++) {
    const k = i % 4;
    const timestamp = 1000 + i * 5000;
    if (k === 0)
      frames.push({
        timestamp,
        url: 'dds://camera',
        data: patternBytes(200 + (i % 9) * 170, i),
        serType: 'pb.Image',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.Publish,
      });
    else if (k === 1)
      frames.push({
        timestamp,
        url: 'dds://imu',
        data: patternBytes(24 + (i % 5), i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Subscribe,
      });
    else if (k === 2)
      frames.push({
        timestamp,
        url: 'dds://param',
        data: patternBytes(8, i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: i % 8 === 2 ? ActionType.Set : ActionType.Get,
      });
    else
      frames.push({
        timestamp,
        url: 'dds://blob',
        data: new Uint8Array(600).fill(i & 0xff),
        serType: '',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.Publish,
      });
  }
  return frames;
}

// CRCs are on by default; they are spelled out here because the harness relies on them (see `checksummed`).
const CONFIGS: Record<Exclude<FuzzFormat, 'foreign'>, Array<Partial<WriterConfig>>> = {
  '.vcap': [
    { compress: 'zstd', enableChunkCrc: true, cacheSize: 3000 },
    { cacheSize: 4096, enableChunkCrc: true },
    { cacheSize: 0, enableChunkCrc: true },
  ],
  '.vdb': [{ compress: 'lzav' }, {}],
  '.vdbx': [{ compress: 'lzav', splitBySize: 24 * 1024 }],
  '.vcapx': [{ compress: 'zstd', cacheSize: 3000, enableChunkCrc: true, splitBySize: 24 * 1024 }],
};

const ORIGINALS = new Map(fuzzFrames().map((f) => [`${f.url}@${f.timestamp}`, f.data]));

/** A frame as one of `fuzzFrames` was written (same url, time and bytes). */
export function isOriginal(frame: Frame): boolean {
  const data = ORIGINALS.get(`${frame.url}@${frame.timestamp}`);
  return data !== undefined && data.length === frame.data.length && data.every((b, i) => b === frame.data[i]);
}

/** Records the base files of a format into `dir` and loads them. */
export async function buildBases(format: FuzzFormat, dir: string): Promise<FuzzBase[]> {
  if (format === 'foreign') return foreignBases();
  const bases: FuzzBase[] = [];
  for (const [n, config] of CONFIGS[format].entries()) {
    const sub = join(dir, `base-${n}`);
    rmSync(sub, { recursive: true, force: true });
    mkdirSync(sub, { recursive: true });
    const main = `bag${format}`;
    const writer = await BagWriter.create(join(sub, main), {
      ...config,
      syncMode: true,
      startTimestamp: START,
      tagName: 'fuzz',
      // Not the default (the process's name): a case replayed by another process (`--case`, regressions.test.ts)
      // must get the bytes the runner mutated, or its mutation lands elsewhere and the finding does not reproduce.
      // The name the runner's children (fuzz-child.js) wrote by default, so cases found before stay as they were.
      processName: 'fuzz-child',
    });
    writer.pushSchema(SAMPLE_PROTO_SCHEMA);
    for (const frame of fuzzFrames())
      if (writer.push(frame) < 0) throw new Error(`fuzz base: push failed: ${writer.stats().lastError}`);
    await writer.close();
    const files = new Map<string, Uint8Array>();
    for (const name of readdirSync(sub).sort()) files.set(name, new Uint8Array(readFileSync(join(sub, name))));
    const checksummed = format.startsWith('.vcap') && (config.cacheSize ?? 1) > 0 && config.enableChunkCrc !== false;
    bases.push({ name: `${format}#${n}`, main, files, checksummed, written: fuzzFrames().length });
  }
  return bases;
}

/**
 * The foreign formats' bases: the committed fixtures written by each format's reference tools (fixtures/foreign:
 * MCAP by the mcap library, ROS 1 and rosbag2 by rosbags, Apollo and ULog by their generators), a rosbag2 recording
 * as its whole folder (`main` "." is the folder the case is placed in), so `metadata.yaml` is mutated too.
 */
function foreignBases(): FuzzBase[] {
  const load = (path: string) => new Uint8Array(readFileSync(path));
  const bases: FuzzBase[] = foreignRecordings
    .filter((recording) => !recording.folder)
    .map(({ name }) => {
      const file = name.split('/')[1]!;
      return { name, main: file, files: new Map([[file, load(fixturePath('foreign', name))]]), checksummed: false };
    });
  for (const { name } of foreignRecordings.filter((recording) => recording.folder)) {
    const dir = fixturePath('foreign', name);
    const files = new Map<string, Uint8Array>();
    for (const file of readdirSync(dir).sort())
      if (statSync(join(dir, file)).isFile()) files.set(file, load(join(dir, file)));
    bases.push({ name, main: '.', files, checksummed: false });
  }
  return bases;
}

/**
 * The digest of every file of every base the harness builds (`foreign` ones are read as committed), by
 * `<format> <base>/<file>`; the summary sidecars are left out (they name the folder they were written in).
 */
export async function baseDigests(dir: string, digest: (bytes: Uint8Array) => string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const format of ['.vdb', '.vcap', '.vdbx', '.vcapx'] as const) {
    for (const base of await buildBases(format, join(dir, format.slice(1)))) {
      for (const [name, bytes] of base.files)
        if (!name.endsWith('.json')) out[`${format} ${base.name}/${name}`] = digest(bytes);
    }
  }
  return out;
}
