import { basename } from 'node:path';
import {
  BagError,
  guardFile,
  type CursorQuery,
  type Frame,
  type InfoMetadata,
  type ReaderOptions,
  type SchemaData,
  type SchemaType,
  problemsRecord,
} from '@vlink/bag-core';
import { guardSqliteFiles, loadDriver } from '@vlink/bag-sqlite';
import { maxBig, minBig } from '../common/bigints.js';
import { familyOf } from '../common/encodings.js';
import { damaged } from '../common/errors.js';
import type { Codecs } from '@vlink/bag-mcap';
import { loadMcapCodecs } from '../common/lz4.js';
import { type ForeignUrl, foreignInfo, metadataEntry } from '../common/foreign-info.js';
import { ForeignReader } from '../common/reader-base.js';
import { applyCdrHeader, startsWithHeader } from '../common/ros-header.js';
import { TimeBase } from '../common/time-base.js';
import { compressionOf, DecompressedCopy, messagePayload } from './compression.js';
import { CopiedStorage } from './copied-storage.js';
import { McapStorage } from './mcap-storage.js';
import { parseStorageMetadata, type Ros2Metadata } from './metadata-yaml.js';
import { openSqliteStorage } from './sqlite-read-around.js';
import { locate } from './locate.js';
import { distroOf, STANDARD_DEFINITIONS_PACKAGE, StandardDefinitions } from './standard-definitions.js';
import { openLeavingFolderAsIs } from './wal-copy.js';
import type { Ros2Storage } from './storage.js';
import { reusableFrame } from '../common/reader-helpers.js';

/** What frames of one storage topic carry. */
interface TopicTemplate {
  url: string;
  serType: string;
  schemaType: SchemaType;
  header: boolean;
  /** Serialized as CDR: a payload that begins with zstd's magic is a compressed one (see messagePayload). */
  cdr: boolean;
}

/**
 * A ROS 2 bag through the Backend seam: a bag folder (`metadata.yaml` + its storage files, sqlite3 or mcap) or a
 * single `.db3`. Storage files are read one after the other, as rosbag2's sequential reader does: sqlite3 in
 * `ORDER BY timestamp`, mcap in file order. topic → url, type → ser, `cdr` → family Cdr, message definitions
 * (`ros2msg`/`ros2idl`) → schemas; the storage's receive time → timestamp; publishTime: mcap's `publish_time`, or
 * (sqlite3, which has none) the `std_msgs/Header` stamp of types that start with one.
 */
export class Ros2Reader extends ForeignReader {
  /** Per storage: its topic key → template. */
  private readonly templates: Array<Map<number, TopicTemplate>>;

  private constructor(
    path: string,
    private readonly storages: Ros2Storage[],
    private readonly base: TimeBase,
    metadata: Ros2Metadata | undefined,
    private readonly codecs: Codecs,
    /** `message` compression: every payload is a zstd frame of its own. */
    private readonly allCompressed: boolean,
    /** Opened with tryToFix: what was read around (no metadata.yaml; messages of undefined topics, per storage). */
    problems: string[],
  ) {
    const urls = new Map<string, ForeignUrl>();
    const schemas = new Map<string, SchemaData>();
    const templates = storages.map(() => new Map<number, TopicTemplate>());
    const described = new Map((metadata?.topics ?? []).map((t) => [t.name, t]));
    const standard = new StandardDefinitions(
      distroOf([metadata?.rosDistro, ...storages.map((s) => s.rosDistro)], metadata?.version),
    );
    const fromStandard = new Set<string>();
    storages.forEach((storage, s) => {
      for (const storageTopic of storage.topics) {
        // A topic metadata.yaml lists has the type it states there, as rosbag2 and rosbags read it (a storage may
        // name it otherwise where the yaml was edited); a definition is only taken when it is of that type.
        const topic = { ...storageTopic, type: described.get(storageTopic.name)?.type || storageTopic.type };
        let definition = usable(storage.definitions.get(topic.type));
        if (!definition && topic.encoding.toLowerCase() === 'cdr') {
          // A bag from before Iron (or a type rosbag2 could not find): the distro's own definition, and it is told.
          const text = standard.textOf(topic.type);
          if (text !== undefined) {
            definition = { encoding: 'ros2msg', text };
            fromStandard.add(topic.type);
          }
        }
        const schemaType = familyOf(topic.encoding, definition?.encoding);
        templates[s]!.set(topic.key, {
          url: topic.name,
          serType: topic.type,
          schemaType,
          header: startsWithHeader(definition?.encoding === 'ros2msg' ? definition.text : '', true),
          cdr: topic.encoding.toLowerCase() === 'cdr',
        });
        const count = storage.counts.get(topic.key) ?? 0;
        const known = urls.get(topic.name);
        if (known) known.count += count;
        else
          urls.set(topic.name, {
            url: topic.name,
            ser: topic.type,
            schemaType,
            encoding: topic.encoding,
            count,
            size: 0,
          });
        if (definition && !schemas.has(topic.type))
          schemas.set(topic.type, {
            name: topic.type,
            encoding: definition.encoding,
            schemaType: familyOf('', definition.encoding),
            data: new TextEncoder().encode(definition.text),
          });
      }
    });
    const first = minBig(storages.map((s) => s.firstNs));
    const last = maxBig(storages.map((s) => s.lastNs));
    const identifier = storages[0]?.identifier ?? metadata?.storageIdentifier ?? 'sqlite3';
    const info: InfoMetadata[] = [];
    if (metadata) {
      info.push(
        metadataEntry('rosbag2.metadata', {
          version: metadata.version,
          storage_identifier: metadata.storageIdentifier,
          relative_file_paths: metadata.relativeFilePaths.join(','),
          starting_time_ns: metadata.startingTimeNs,
          duration_ns: metadata.durationNs,
          message_count: metadata.messageCount,
          compression_format: metadata.compressionFormat,
          compression_mode: metadata.compressionMode,
          ros_distro: metadata.rosDistro,
        }),
      );
      if (Object.keys(metadata.customData).length > 0)
        info.push({ name: 'rosbag2.custom_data', values: { ...metadata.customData } });
    }
    if (fromStandard.size > 0)
      info.push(
        metadataEntry('rosbag2.standard_definitions', {
          distro: standard.distro,
          source: STANDARD_DEFINITIONS_PACKAGE,
          types: [...fromStandard].join(','),
        }),
      );
    info.push(...problemsRecord('rosbag2', problems));
    for (const url of urls.values()) {
      // metadata.yaml's word first; else what the first storage with the topic keeps of it.
      const t = described.get(url.url);
      const kept = storages.flatMap((s) => s.topics).find((topic) => topic.name === url.url);
      info.push(
        metadataEntry('rosbag2.topic', {
          name: url.url,
          type: url.ser,
          serialization_format: url.encoding,
          type_description_hash: t?.typeDescriptionHash || kept?.typeDescriptionHash,
          offered_qos_profiles: t?.qos ?? kept?.offeredQosProfiles,
        }),
      );
    }
    const facts = foreignInfo({
      path,
      format: 'rosbag2',
      version: String(metadata?.version ?? ''),
      storageType: `rosbag2-${identifier}`,
      // Validated by open(): a compressed bag here is one whose compression we read.
      compressionType: compressionOf(metadata, path) ? metadata!.compressionFormat.toLowerCase() : 'none',
      base,
      firstNs: first,
      lastNs: last,
      hasCompleted: storages.every((s) => s.complete) && problems.length === 0,
      fileSize: storages.reduce((sum, s) => sum + s.fileSize, 0),
      splitCount: storages.length,
      hasSchema: schemas.size > 0,
      urls: [...urls.values()],
      metadata: info,
    });
    super(path, facts, [...schemas.values()]);
    this.templates = templates;
  }

  static async open(path: string, options: ReaderOptions): Promise<Ros2Reader> {
    const located = await locate(path, options.confineTo);
    const { files, identifier, unindexed } = located;
    const tryToFix = options.tryToFix === true;
    const problems: string[] = [];
    if (unindexed) {
      const what = `the rosbag2 folder has no metadata.yaml (a recording that was not closed) and holds ${files.length} storage files`;
      if (!tryToFix) throw damaged(path, what, `them in their numeric order`);
      problems.push(
        `no metadata.yaml: read the ${files.length} storage files in their numeric order (${files.map((f) => basename(f)).join(', ')})`,
      );
    }
    let metadata = located.metadata;
    const compression = compressionOf(metadata, path);
    const storages: Ros2Storage[] = [];
    try {
      // A served folder (`confineTo`): metadata.yaml names the storage files, and none of them may lead out of it.
      if (options.confineTo !== undefined) await guardStorageFiles(files, identifier, options.confineTo);
      const codecs = await loadMcapCodecs();
      const openStorage = await storageOpener(identifier, path, codecs, tryToFix);
      for (const file of files) {
        // Without metadata.yaml, each name tells: rosbag2 compresses a file when it closes it, the last one stays as is.
        if (compression === 'file' || (unindexed && /\.zstd$/i.test(file)))
          storages.push(await onCopy(file, openStorage));
        else if (identifier === 'sqlite3') storages.push(openLeavingFolderAsIs(file, openStorage));
        else storages.push(openStorage(file, false));
      }
      const undefinedTopics = storages.flatMap(messagesOfUndefinedTopics);
      if (undefinedTopics.length > 0 && !tryToFix) {
        const intact = storages.reduce((n, s) => n + s.topics.reduce((m, t) => m + (s.counts.get(t.key) ?? 0), 0), 0);
        throw damaged(path, undefinedTopics.join('; '), `the ${intact} messages of the defined topics`);
      }
      // A storage file opened on its own, or the files of a folder without metadata.yaml: the copy of the metadata
      // rosbag2 keeps inside them (QoS, message compression); the last file's is the latest.
      const carrier = unindexed ? storages.findLast((s) => s.embeddedMetadata !== undefined) : storages[0];
      if (!metadata && carrier && (storages.length === 1 || unindexed)) metadata = embeddedMetadata(carrier, tryToFix);
      const base = TimeBase.fromFirstNs(minBig(storages.map((s) => s.firstNs)));
      const allCompressed = compressionOf(metadata, path) === 'message';
      // What a storage read around (an MCAP storage refuses it already when strict).
      const storageProblems = storages.flatMap((s) => s.problems.map((p) => `${basename(s.file)}: ${p}`));
      if (storageProblems.length > 0 && !tryToFix) throw damaged(path, storageProblems.join('; '), 'what SQLite reads');
      // A storage its writer did not finish reads whole (a strict open takes it), but the bag is not complete.
      const unfinished = storages.flatMap((s) => (s.unfinished ? [`${basename(s.file)}: ${s.unfinished}`] : []));
      problems.push(...undefinedTopics, ...storageProblems, ...unfinished);
      // What a damaged storage lost past its last readable row, no storage can say: metadata.yaml's count can.
      if (storageProblems.length > 0 && metadata) problems.push(...countedNotRead(metadata, storages));
      return new Ros2Reader(path, storages, base, metadata, codecs, allCompressed, problems);
    } catch (error) {
      for (const storage of storages) storage.close();
      throw error;
    }
  }

  *frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.ensureOpen();
    const wanted = query.urls ? new Set(query.urls) : undefined;
    const frame = reusableFrame({ publishTime: undefined });
    const base = this.base;
    for (let s = 0; s < this.storages.length; s++) {
      const templates = this.templates[s]!;
      const keys = wanted ? [...templates].filter(([, t]) => wanted.has(t.url)).map(([key]) => key) : undefined;
      const window = { keys, beginUs: query.beginUs, endUs: query.endUs };
      for (const message of this.storages[s]!.messages(window, base)) {
        const t = templates.get(message.key);
        if (!t) continue; // a topic id the storage does not define: refused at open, or told (tryToFix)
        frame.timestamp = message.timestamp;
        frame.url = t.url;
        frame.serType = t.serType;
        frame.schemaType = t.schemaType;
        frame.data = messagePayload(message.data, t.cdr, this.allCompressed, this.codecs, {
          file: this.path,
          url: t.url,
        });
        if (message.publishTime !== undefined) {
          frame.publishTime = message.publishTime;
          frame.sequence = message.sequence;
        } else if (t.header) applyCdrHeader(frame, frame.data, base);
        else frame.publishTime = undefined;
        yield frame;
        if (this.closed) return;
      }
    }
  }

  protected release(): void {
    for (const storage of this.storages) storage.close();
  }
}

/** The messages metadata.yaml counts that the storage files do not hold (none when they hold as many or more). */
function countedNotRead(metadata: Ros2Metadata, storages: readonly Ros2Storage[]): string[] {
  const held = storages.reduce((n, s) => n + [...s.counts.values()].reduce((a, b) => a + b, 0), 0);
  if (!(metadata.messageCount > held)) return [];
  return [
    `metadata.yaml counts ${metadata.messageCount} messages, the storage files hold ${held}: ${metadata.messageCount - held} not read`,
  ];
}

/** A stored definition that describes something: rosbag2 writes encoding `unknown` and no text for a type it lacked. */
function usable(definition: { encoding: string; text: string } | undefined) {
  if (!definition || definition.text.trim() === '') return undefined;
  return ['ros2msg', 'ros2idl'].includes(definition.encoding) ? definition : undefined;
}

/**
 * Messages a storage holds under a topic id it does not define (a sqlite3 `messages.topic_id` missing from `topics`):
 * no url, type or definition can be given to them, so the frames skip them, and they are told, never dropped silently.
 */
function messagesOfUndefinedTopics(storage: Ros2Storage): string[] {
  const defined = new Set(storage.topics.map((t) => t.key));
  return [...storage.counts]
    .filter(([key, count]) => !defined.has(key) && count > 0)
    .map(([key, count]) => `${count} messages of topic id ${key}, which ${basename(storage.file)} does not define`);
}

/** The metadata a storage file holds; one that does not parse is refused, or with `tryToFix` left aside. */
function embeddedMetadata(storage: Ros2Storage, tryToFix: boolean): Ros2Metadata | undefined {
  if (storage.embeddedMetadata === undefined) return undefined;
  try {
    return parseStorageMetadata(storage.embeddedMetadata, storage.file);
  } catch (error) {
    if (tryToFix) return undefined;
    throw damaged(storage.file, (error as Error).message, 'its messages without it');
  }
}

/**
 * How the storage files of this bag open (`tryToFix`: an MCAP storage without a summary is scanned, a damaged sqlite3
 * one read from a salvaged copy).
 */
async function storageOpener(
  identifier: string,
  path: string,
  codecs: Codecs,
  tryToFix: boolean,
): Promise<(file: string, immutable: boolean) => Ros2Storage> {
  if (identifier === 'sqlite3') {
    const driver = await loadDriver();
    return (file, immutable) => openSqliteStorage(driver, file, immutable, tryToFix);
  }
  if (identifier === 'mcap') return (file) => McapStorage.open(file, codecs, tryToFix);
  throw new BagError('UNSUPPORTED_FORMAT', `rosbag2 storage "${identifier}" is not supported (sqlite3, mcap)`, {
    file: path,
  });
}

/**
 * Each storage file (and, for sqlite3, the journal files SQLite would open beside it) must be a regular file whose real
 * path stays inside `confineTo`: a crafted metadata.yaml (`../../secret.db3`) or a symbolic link must not reach out.
 */
async function guardStorageFiles(files: readonly string[], identifier: string, confineTo: string): Promise<void> {
  for (const file of files) {
    if (identifier === 'sqlite3' && !file.toLowerCase().endsWith('.zstd'))
      await guardSqliteFiles(file, { confineTo }, 'segment');
    else await guardFile(file, { confineTo, role: 'segment' });
  }
}

/** A `file`-compressed storage, opened on a decompressed copy that is removed when the storage closes. */
async function onCopy(file: string, open: (file: string, immutable: boolean) => Ros2Storage): Promise<Ros2Storage> {
  const copy = await DecompressedCopy.of(file);
  try {
    return new CopiedStorage(open(copy.path, false), file, copy);
  } catch (error) {
    copy.remove();
    throw error;
  }
}
