import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, BagWriter, SchemaType, registerBackend, type Frame } from '@vlink/bag';
import { memoryBackend, sampleFrames } from '@vlink/bag-core/testing';
import { pointBytes, pointDescriptor } from '@vlink/fixtures/protobuf';

export { pointDescriptor };

/** Recording start of every fixture bag (ms since epoch). */
export const START_MS = 1_773_712_800_123;

/** What each fixture bag was written with, by path: the tests' expected frames (see readAll). */
const written = new Map<string, Frame[]>();

async function writeBag(path: string, frames: Frame[], setup?: (writer: BagWriter) => void): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: START_MS });
  setup?.(writer);
  for (const frame of frames) writer.push({ ...frame });
  await writer.close();
  written.set(
    path,
    frames.map((f) => ({ ...f, data: f.data.slice() })),
  );
}

export interface FixtureRoot {
  root: string;
  /** A directory outside the root (symlink targets). */
  outside: string;
  cleanup(): void;
}

/**
 * A served root with: `drive.vdb` and `runs/drive.vcap` (core's sample recording, incl. a 1 MiB payload),
 * `proto.vdb` (protobuf with an embedded descriptor, JSON and text urls), `same-ts.vdb` (timestamps shared by 4
 * frames), `big.vcap` (ten 1 MiB frames), `mem.memjson`, a corrupt `bad.vdb`, an unsupported `notes.txt`, a directory named `dir.vdb`, a symlink
 * inside (`alias.vdb` → drive.vdb) and one leading outside (`escape.vdb`).
 */
export async function buildFixtureRoot(): Promise<FixtureRoot> {
  registerBackend(memoryBackend);
  const base = mkdtempSync(join(tmpdir(), 'vlink-http-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'runs'), { recursive: true });
  mkdirSync(join(root, 'dir.vdb'));
  mkdirSync(outside);
  const sample = sampleFrames(120);
  await writeBag(join(root, 'drive.vdb'), sample);
  await writeBag(join(root, 'runs', 'drive.vcap'), sample);
  await writeBag(join(root, 'mem.memjson'), sample.slice(0, 12));
  await writeBag(join(outside, 'secret.vdb'), sample.slice(0, 3));

  const { fds, Point } = pointDescriptor();
  const proto: Frame[] = [];
  for (let i = 0; i < 30; i++) {
    const timestamp = 5_000 + i * 1_000;
    if (i % 3 === 0)
      proto.push({
        timestamp,
        url: 'pb/point',
        data: pointBytes(Point, i),
        serType: 'test.Point',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.Publish,
      });
    else if (i % 3 === 1)
      proto.push({
        timestamp,
        url: 'json/state',
        data: new TextEncoder().encode(JSON.stringify({ i, ok: true })),
        serType: 'json',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
    else
      proto.push({
        timestamp,
        url: 'text/log',
        data: new TextEncoder().encode(`line ${i}`),
        serType: 'text',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
  }
  await writeBag(join(root, 'proto.vdb'), proto, (w) =>
    w.pushSchema({ name: 'test.Point', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: fds }),
  );

  const same: Frame[] = [];
  for (let i = 0; i < 25; i++) {
    same.push({
      timestamp: 1_000 + Math.floor(i / 4) * 1_000,
      url: i % 2 ? 'a' : 'b',
      data: new Uint8Array([i]),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writeBag(join(root, 'same-ts.vdb'), same);

  const big: Frame[] = [];
  for (let i = 0; i < 10; i++)
    big.push({
      timestamp: 1_000 + i * 1_000,
      url: 'shm://big',
      data: new Uint8Array(1024 * 1024).fill(i),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writeBag(join(root, 'big.vcap'), big);

  writeFileSync(join(root, 'bad.vdb'), 'this is not a SQLite database, just text '.repeat(200));
  writeFileSync(join(root, 'notes.txt'), 'not a bag');
  symlinkSync(join(root, 'drive.vdb'), join(root, 'alias.vdb'));
  symlinkSync(join(outside, 'secret.vdb'), join(root, 'escape.vdb'));
  return { root, outside, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/**
 * The frames a fixture bag was written with (copies), in time order, optionally only some urls: the reference for
 * byte-exact stream checks. Taken from the inputs, not from BagReader, so a reader bug cannot hide in both the
 * server's answer and the expectation.
 */
export async function readAll(path: string, urls?: string[]): Promise<Frame[]> {
  const frames = written.get(path);
  if (!frames) throw new Error(`${path} is not a fixture bag written by buildFixtureRoot()`);
  return (
    frames
      .map((f, i) => ({ f, i }))
      .sort((a, b) => a.f.timestamp - b.f.timestamp || a.i - b.i)
      // Our formats give every frame a publish time: the one it was written with, else its log time.
      .map(({ f }) => ({ ...f, publishTime: f.publishTime ?? f.timestamp, data: f.data.slice() }))
      .filter((f) => !urls || urls.includes(f.url))
  );
}
