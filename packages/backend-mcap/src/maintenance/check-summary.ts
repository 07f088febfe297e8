import type { Readable } from '../io/readable.js';
import type { Channel, ChunkIndex, Schema, Statistics } from '../mcap/records.js';
import type { Summary } from '../mcap/summary.js';
import type { ChunkFacts, DataSectionFacts } from './check-data-section.js';
import type { ReportProblem } from './check-problems.js';
import { sameDefinition } from './records-equal.js';

/**
 * The summary section against a scan of the data: statistics, schemas and channels, chunk indexes with their message
 * indexes, metadata indexes, and that every summary offset points at a group of its opcode. `complete` (VLink files)
 * also requires every schema and channel of the data to be repeated in the summary.
 */
export function checkSummaryAgainstData(
  summary: Summary,
  data: DataSectionFacts,
  complete: boolean,
  readable: Readable,
  problem: ReportProblem,
): void {
  const st = summary.statistics;
  if (!st) problem('the summary has no Statistics record');
  else compareStatistics(st, data, problem);
  compareDefinitions('schema', summary.schemas, data.schemas, complete, problem);
  compareDefinitions('channel', summary.channels, data.channels, complete, problem);
  compareChunkIndexes(summary.chunkIndexes, data.chunks, problem);
  const metadata = data.metadata;
  const byOffset = new Map(metadata.map((m) => [m.offset, m]));
  if (summary.metadataIndexes.length !== metadata.length)
    problem(`${summary.metadataIndexes.length} metadata indexes for ${metadata.length} metadata records`);
  for (const m of summary.metadataIndexes) {
    const found = byOffset.get(Number(m.offset));
    if (!found || BigInt(found.length) !== m.length || found.record.name !== m.name)
      problem(`metadata index "${m.name}" at ${m.offset} does not match a metadata record`);
  }
  for (const g of summary.summaryOffsets) {
    const inside =
      g.groupStart >= summary.footer.summaryStart && g.groupStart + g.groupLength <= summary.footer.summaryOffsetStart;
    // An empty group is what the official mcap writers (Python's among them) point at for an empty schema, channel or
    // chunk-index group: valid, it just holds no record.
    if (inside && g.groupLength === 0n) continue;
    let opcode = -1;
    if (inside) opcode = readable.read(Number(g.groupStart), 1)[0]!;
    if (!inside || opcode !== g.groupOpcode)
      problem(`summary offset for opcode ${g.groupOpcode} does not point at such a group`);
  }
}

function compareStatistics(st: Statistics, found: DataSectionFacts, problem: ReportProblem): void {
  const pairs: Array<[string, bigint | number, bigint | number]> = [
    ['messageCount', st.messageCount, BigInt(found.messageCount)],
    ['schemaCount', st.schemaCount, found.schemas.size],
    ['channelCount', st.channelCount, found.channels.size],
    ['attachmentCount', st.attachmentCount, found.attachments],
    ['metadataCount', st.metadataCount, found.metadata.length],
    ['chunkCount', st.chunkCount, found.chunks.length],
    ['messageStartTime', st.messageStartTime, found.start],
    ['messageEndTime', st.messageEndTime, found.end],
  ];
  for (const [name, stored, counted] of pairs)
    if (stored !== counted) problem(`statistics ${name} is ${stored}, the data has ${counted}`);
  const ids = new Set([...st.channelMessageCounts.keys(), ...found.tallies.keys()]);
  for (const id of ids) {
    const stored = st.channelMessageCounts.get(id) ?? 0n;
    const counted = BigInt(found.tallies.get(id)?.count ?? 0);
    if (stored !== counted) problem(`statistics count of channel ${id} is ${stored}, the data has ${counted}`);
  }
}

/** Summary schemas/channels must equal the data's; VLink files must repeat all of them (writers do). */
function compareDefinitions<T extends Schema | Channel>(
  what: string,
  inSummary: Map<number, T>,
  inData: Map<number, T>,
  complete: boolean,
  problem: ReportProblem,
): void {
  for (const [id, record] of inSummary) {
    const data = inData.get(id);
    if (!data) problem(`summary ${what} ${id} is not in the data section`);
    else if (!sameDefinition(data, record)) problem(`summary ${what} ${id} differs from the data section's`);
  }
  if (complete)
    for (const id of inData.keys()) if (!inSummary.has(id)) problem(`${what} ${id} is missing from the summary`);
}

function compareChunkIndexes(indexes: readonly ChunkIndex[], chunks: ChunkFacts[], problem: ReportProblem): void {
  const byOffset = new Map(chunks.map((c) => [c.offset, c]));
  if (indexes.length !== chunks.length) problem(`${indexes.length} chunk indexes for ${chunks.length} chunks`);
  for (const ci of indexes) {
    const c = byOffset.get(Number(ci.chunkStartOffset));
    const at = `chunk index for ${ci.chunkStartOffset}`;
    if (!c) {
      problem(`${at}: no chunk there`);
      continue;
    }
    if (ci.chunkLength !== BigInt(c.length)) problem(`${at}: length ${ci.chunkLength}, the chunk has ${c.length}`);
    if (
      ci.compression !== c.compression ||
      ci.compressedSize !== c.storedSize ||
      ci.uncompressedSize !== c.uncompressedSize
    )
      problem(`${at}: compression or sizes disagree with the chunk`);
    if (ci.messageStartTime !== c.start || ci.messageEndTime !== c.end)
      problem(`${at}: times ${ci.messageStartTime}..${ci.messageEndTime}, the messages say ${c.start}..${c.end}`);
    if (ci.messageIndexLength !== BigInt(c.indexLength))
      problem(`${at}: message index length ${ci.messageIndexLength}, found ${c.indexLength}`);
    const ids = new Set([...ci.messageIndexOffsets.keys(), ...c.indexes.keys()]);
    for (const id of ids) {
      const offset = ci.messageIndexOffsets.get(id);
      if (offset === undefined || offset !== BigInt(c.indexes.get(id)?.offset ?? -1))
        problem(`${at}: message index offset of channel ${id} is wrong`);
    }
  }
}
