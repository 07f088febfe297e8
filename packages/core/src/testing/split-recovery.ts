import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test as nodeTest } from 'node:test';
import type { Backend, BackendReader, RecordingContext } from '../backend/backend.js';
import { BagError } from '../errors.js';
import { resolveWriterConfig, type WriterConfig } from '../model/config.js';
import type { Frame } from '../model/frame.js';
import { createTestContext } from './context.js';
import { SAMPLE_PROTO_SCHEMA, sampleFrames } from './sample-frames.js';
import { writeFrame } from './write-frame.js';

/** Every case has a timeout on every runtime (Deno's test runner has none of its own; the suite's is 120 s too). */
const test = (name: string, fn: () => Promise<void>) => nodeTest(name, { timeout: 120_000 }, fn);

export interface SplitRecoveryOptions {
  backend: Backend;
  /** The split extension: `.vdbx`, `.vcapx`. */
  extension: string;
  /** Extra writer config for every case; the suite sets a small `splitBySize` itself. */
  config?: Partial<WriterConfig>;
}

/**
 * What every split format must do with a recording that was interrupted (format reference §4.2: the segment being written is not
 * in the manifest until it is closed): `tryToFix` reads the unlisted segments, `check()` fails until `fix()` lists
 * them, and the repaired manifest has the totals a clean close would have written. The interruption is simulated by
 * copying the recording's directory while the writer is still open (after a commit), so the copy is exactly what a
 * power cut at that instant leaves on disk.
 */
export function runSplitRecoveryConformance({ backend, extension, config = {} }: SplitRecoveryOptions): void {
  describe(`Split recovery: ${backend.name} ${extension}`, () => {
    const root = mkdtempSync(join(tmpdir(), `vlink-recovery-${extension.slice(1)}-`));
    let n = 0;
    after(() => rmSync(root, { recursive: true, force: true }));

    /**
     * Records `frames`, copies the directory after `crashAfter` of them (committed, writer still open), then writes
     * the rest and closes. Returns the copy's manifest path and the cleanly closed one's.
     */
    async function interrupted(
      frames: Frame[],
      splitBySize: number,
      context = createTestContext({ schemas: [SAMPLE_PROTO_SCHEMA] }),
      splitNameByTime = false,
    ) {
      const live = join(root, `live-${n}`);
      const crashed = join(root, `crashed-${n++}`);
      mkdirSync(live);
      mkdirSync(crashed);
      const path = join(live, `rec${extension}`);
      const writer = await backend.createWriter(
        path,
        resolveWriterConfig({ ...config, splitBySize, splitNameByTime, compress: 'auto' }),
        context,
      );
      for (const frame of frames) writeFrame(writer, frame);
      writer.commit();
      for (const name of readdirSync(live)) copyFileSync(join(live, name), join(crashed, name));
      writer.close();
      return { clean: path, crashed: join(crashed, `rec${extension}`) };
    }

    const manifestOf = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
    const open = (path: string, tryToFix: boolean, readOnly = true) => backend.openReader(path, { tryToFix, readOnly });
    const count = (reader: BackendReader) => [...reader.frames({})].length;
    async function withReader<T>(
      reader: Promise<BackendReader>,
      run: (r: BackendReader) => Promise<T> | T,
    ): Promise<T> {
      const r = await reader;
      try {
        return await run(r);
      } finally {
        r.close();
      }
    }

    for (const byTime of [false, true])
      test(`tryToFix reads the segments the manifest left out; fix() lists them with the totals a clean close writes (${byTime ? 'time' : 'index'} names)`, async () => {
        const input = sampleFrames(240);
        const { clean, crashed } = await interrupted(input, 32 * 1024, undefined, byTime);
        const listed: string[] = manifestOf(crashed).VLinkFiles;
        const all: string[] = manifestOf(clean).VLinkFiles;
        assert.ok(
          listed.length >= 1 && listed.length < all.length,
          `the copy lists ${listed.length} of ${all.length} segments`,
        );
        assert.equal(manifestOf(crashed).VLinkHeader.complete, false);

        // As VLink: without tryToFix only the listed segments, and check() says something is missing.
        await withReader(open(crashed, false), async (r) => {
          assert.ok(count(r) < input.length);
          assert.equal(await r.check!(), false);
        });
        await withReader(open(crashed, true), async (r) => {
          // Readers may reuse the frame object and its bytes between iterations: keep copies.
          const frames = Array.from(r.frames({}), (f) => ({ ...f, data: f.data.slice() }));
          assert.equal(frames.length, input.length);
          frames.forEach((f, i) => {
            assert.equal(f.timestamp, input[i]!.timestamp, `timestamp #${i}`);
            assert.deepEqual(f.data, input[i]!.data, `data #${i}`);
          });
          assert.equal(r.info().messageCount, input.length);
          assert.equal(r.info().hasCompleted, false);
        });
        await withReader(open(crashed, true, false), async (r) => {
          assert.equal(await r.fix!(false), true);
          assert.equal(await r.check!(), true);
          assert.equal(r.info().hasCompleted, true);
          assert.equal(count(r), input.length);
        });

        const repaired = manifestOf(crashed);
        const reference = manifestOf(clean);
        assert.deepEqual(repaired.VLinkFiles, reference.VLinkFiles);
        assert.equal(repaired.VLinkHeader.complete, true);
        assert.equal(repaired.VLinkHeader.count, reference.VLinkHeader.count);
        assert.equal(repaired.VLinkHeader.duration, reference.VLinkHeader.duration);
        const key = (u: { url: string; action?: string }) => `${u.url} ${u.action ?? ''}`;
        const want = new Map<string, { index: number; count: number; size: number; freq: number }>(
          reference.VLinkUrls.map((u: { url: string }) => [key(u), u]),
        );
        assert.equal(repaired.VLinkUrls.length, want.size);
        for (const u of repaired.VLinkUrls) {
          const w = want.get(key(u));
          assert.ok(w, `url ${key(u)} is in the clean manifest`);
          assert.deepEqual([u.index, u.count], [w.index, w.count], key(u));
          // Sizes are as the crashed segment last refreshed them (a `.vdb` every second, as VLink): never more.
          assert.ok(u.size <= w.size && (w.size === 0 || u.size > 0), `${key(u)} size ${u.size} vs ${w.size}`);
          // The rate over both parts leaves out the gap between them (documented): within a few per cent here.
          if (w.freq > 0) assert.ok(Math.abs(u.freq - w.freq) / w.freq < 0.05, `${key(u)} freq ${u.freq} vs ${w.freq}`);
        }
        // What each segment holds is listed as a clean close lists it (the recovered ones read once by fix()).
        const facts = (m: {
          VLinkBagSegments?: {
            file: string;
            start_timestamp: number;
            count: number;
            begin: number;
            end: number;
            urls: { index: number; count: number }[];
          }[];
        }) =>
          (m.VLinkBagSegments ?? []).map((f) => [
            f.file,
            f.start_timestamp,
            f.count,
            f.begin,
            f.end,
            f.urls.map((u) => [u.index, u.count]),
          ]);
        assert.equal(facts(reference).length, reference.VLinkFiles.length);
        assert.deepEqual(facts(repaired), facts(reference));
        // Repaired means an ordinary bag now: a plain open reads everything (each segment held against its facts).
        await withReader(open(crashed, false), (r) => {
          assert.equal(count(r), input.length);
          assert.equal(r.info().messageCount, input.length);
        });
      });

    test('a recording interrupted before its first split opens with tryToFix and fix() lists its segment', async () => {
      const input = sampleFrames(30);
      const { crashed } = await interrupted(input, 64 * 1024 * 1024);
      assert.deepEqual(manifestOf(crashed).VLinkFiles, []);
      await assert.rejects(
        open(crashed, false),
        (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /tryToFix/.test(e.message),
      );
      await withReader(open(crashed, true), (r) => assert.equal(count(r), input.length));
      // Repairing needs a writable reader.
      await withReader(open(crashed, true), async (r) => {
        await assert.rejects(r.fix!(false), (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED');
      });
      await withReader(open(crashed, true, false), async (r) => {
        assert.equal(await r.fix!(false), true);
        assert.equal(await r.check!(), true);
      });
      assert.equal(manifestOf(crashed).VLinkFiles.length, 1);
      await withReader(open(crashed, false), (r) => assert.equal(count(r), input.length));
    });

    test('segments of another recording in the directory are not taken', async () => {
      const input = sampleFrames(30);
      const { crashed } = await interrupted(input, 64 * 1024 * 1024);
      const dir = join(crashed, '..');
      const segment: string = readdirSync(dir).find((name) => name !== `rec${extension}` && name.startsWith('rec.1.'))!;
      const segmentExtension = segment.slice('rec.1'.length);
      // A gap in the numbering (an older recording's leftover) and a next-numbered segment from another recording.
      copyFileSync(join(dir, segment), join(dir, `rec.3${segmentExtension}`));
      const other: RecordingContext = createTestContext({
        schemas: [SAMPLE_PROTO_SCHEMA],
        startTimestamp: 1_600_000_000_000,
      });
      const { crashed: foreign } = await interrupted(input, 64 * 1024 * 1024, other);
      copyFileSync(join(foreign, '..', segment), join(dir, `rec.2${segmentExtension}`));
      await withReader(open(crashed, true, false), async (r) => {
        assert.equal(count(r), input.length);
        assert.equal(await r.fix!(false), true);
      });
      assert.deepEqual(manifestOf(crashed).VLinkFiles, [segment]);
    });

    test('a complete recording is left alone', async () => {
      const input = sampleFrames(60);
      const { clean } = await interrupted(input, 64 * 1024);
      const before = readFileSync(clean, 'utf8');
      const extra = join(
        clean,
        '..',
        `rec.99${manifestOf(clean).VLinkFiles[0].slice(manifestOf(clean).VLinkFiles[0].lastIndexOf('.'))}`,
      );
      writeFileSync(extra, 'not a segment');
      await withReader(open(clean, true, false), async (r) => {
        assert.equal(count(r), input.length);
        assert.equal(await r.fix!(false), true);
        assert.equal(await r.check!(), true);
      });
      assert.equal(readFileSync(clean, 'utf8'), before);
    });
  });
}
