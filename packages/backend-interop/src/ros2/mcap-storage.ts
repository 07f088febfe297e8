import { BagError } from '@vlink/bag-core';
import {
  type Codecs,
  FileReadable,
  McapFileReader,
  type Metadata,
  readableThroughout,
  recoveryProblems,
  unfinishedNote,
} from '@vlink/bag-mcap';
import { damaged } from '../common/errors.js';
import { readMetadata } from '../common/mcap-recovery.js';
import { mcapMessageSpan } from '../common/mcap-span.js';
import type { TimeBase } from '../common/time-base.js';
import type { MessageWindow, Ros2Storage, StorageMessage, StorageTopic } from './storage.js';

const decoder = new TextDecoder();

/**
 * A rosbag2 mcap storage file through `@vlink/bag-mcap`'s record reader: channels are topics, schema records the
 * message definitions, messages in log-time order (as rosbag2 plays them) with their `publish_time` and `sequence`.
 */
export class McapStorage implements Ros2Storage {
  readonly identifier = 'mcap';
  readonly topics: StorageTopic[] = [];
  readonly definitions = new Map<string, { encoding: string; text: string }>();
  readonly counts = new Map<number, number>();
  readonly firstNs: bigint | undefined;
  readonly lastNs: bigint | undefined;
  readonly embeddedMetadata: string | undefined;
  /** MCAP storages carry every type's schema: the distro is not needed to decode them. */
  readonly rosDistro = undefined;

  private constructor(
    readonly file: string,
    private readonly mcap: McapFileReader,
    readonly fileSize: number,
    /** What a recovery scan of the file read around (see mcap-recovery.ts); empty when it read as written. */
    readonly problems: readonly string[],
    metadata: readonly Metadata[],
  ) {
    const stats = mcap.statistics;
    for (const channel of [...mcap.channels.values()].sort((a, b) => a.id - b.id)) {
      const schema = mcap.schemas.get(channel.schemaId);
      this.topics.push({
        key: channel.id,
        name: channel.topic,
        type: schema?.name ?? '',
        encoding: channel.messageEncoding,
        ...optional('offeredQosProfiles', channel.metadata.get('offered_qos_profiles')),
        ...optional('typeDescriptionHash', channel.metadata.get('topic_type_hash')),
      });
      if (schema && !this.definitions.has(schema.name))
        this.definitions.set(schema.name, { encoding: schema.encoding, text: decoder.decode(schema.data) });
      this.counts.set(channel.id, Number(stats.channelMessageCounts.get(channel.id) ?? 0n));
    }
    this.embeddedMetadata = serializedMetadata(metadata);
    const span = mcapMessageSpan(mcap);
    this.firstNs = span?.firstNs;
    this.lastNs = span?.lastNs;
  }

  get complete(): boolean {
    return this.problems.length === 0 && this.unfinished === undefined;
  }

  get unfinished(): string | undefined {
    return unfinishedNote(this.mcap);
  }

  static open(file: string, codecs: Codecs, tryToFix: boolean): McapStorage {
    const readable = new FileReadable(file);
    try {
      const open = (more = {}) => McapFileReader.open(readable, { codecs, file, allowScan: () => true, ...more });
      const { mcap, fellBack } = readableThroughout(open(), open, tryToFix);
      const metadata = readMetadata(mcap, tryToFix);
      const problems = [
        ...(fellBack === undefined ? [] : [fellBack]),
        ...recoveryProblems(mcap),
        ...(metadata.unread === undefined ? [] : [metadata.unread]),
      ];
      const storage = new McapStorage(file, mcap, readable.size(), problems, metadata.records);
      if (storage.problems.length > 0 && !tryToFix)
        throw damaged(file, `damaged mcap storage (${storage.problems.join('; ')})`, 'the intact messages');
      return storage;
    } catch (error) {
      readable.close();
      throw BagError.isInstance(error) ? error : BagError.wrap(error, 'CORRUPT_FILE', 'bad mcap storage', { file });
    }
  }

  *messages(window: MessageWindow, base: TimeBase): IterableIterator<StorageMessage> {
    if (window.keys?.length === 0) return;
    const cursor = this.mcap.cursor({
      order: 'log-time',
      ...(window.beginUs === undefined ? {} : { startTime: base.nsAtUs(window.beginUs) }),
      ...(window.endUs === undefined ? {} : { endTime: base.nsAtEndOfUs(window.endUs) }),
      ...(window.keys ? { channelIds: window.keys } : {}),
    });
    const out: StorageMessage = { key: 0, timestamp: 0, publishTime: 0, sequence: 0, data: cursor.data };
    while (cursor.next()) {
      out.key = cursor.channelId;
      out.timestamp = base.usFromHalves(cursor.timeHi, cursor.timeLo);
      out.publishTime = base.usFromHalves(cursor.publishHi, cursor.publishLo);
      out.sequence = cursor.sequence;
      out.data = cursor.data;
      yield out;
    }
  }

  close(): void {
    this.mcap.close();
  }
}

/**
 * The copy of the bag's metadata (YAML) a rosbag2 mcap storage keeps: rosbag2 writes one `rosbag2` record when it
 * opens the file and one when it closes it, and the last one holds. Undefined in a file without one.
 */
export function serializedMetadata(metadata: readonly Metadata[]): string | undefined {
  const records = metadata.filter((m) => m.name === 'rosbag2' && m.metadata.has('serialized_metadata'));
  return records.at(-1)?.metadata.get('serialized_metadata');
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value ? ({ [key]: value } as Record<K, string>) : {};
}
