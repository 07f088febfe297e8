import assert from 'node:assert/strict';
import type { BagReader, Info, SchemaData } from '@vlink/bag-core';
import { PayloadDecoder } from '@vlink/bag-decode';
import {
  type Expected,
  type ExpectedMessage,
  expectedStartMs,
  expectedUs,
  foreignPath,
  loadExpected,
} from './expected.js';
import { assertFields } from './fields.js';
import { type ReadFrame, readAll, sha256 } from './read-all.js';

export interface FixtureOptions {
  /** Compare the message lists sorted (url, time, payload) instead of in order: the orders legitimately differ. */
  sorted?: boolean;
  /** The publishTime (µs) our reader must give for a reference message; default: publish_time_ns, else the header stamp. */
  publishTime?: (m: ExpectedMessage, startMs: number) => number | undefined;
  /** The sequence our reader must give; default: `sequence`, else ROS 1's `header_seq`. */
  sequence?: (m: ExpectedMessage) => number | undefined;
}

export interface FixtureRead {
  expected: Expected;
  reader: BagReader;
  info: Info;
  frames: ReadFrame[];
  schemas: SchemaData[];
  startMs: number;
}

const defaultPublish = (m: ExpectedMessage, startMs: number) => {
  const ns = m.publish_time_ns ?? m.header_stamp_ns;
  return ns === undefined ? undefined : expectedUs(ns, startMs);
};
const defaultSequence = (m: ExpectedMessage) => m.sequence ?? m.header_seq;

/**
 * Reads a fixture through the registry and checks it against what its reference reader read: the recording start,
 * the topics (url, type, encoding, count), every message (url, µs log time, publish time, sequence, size and
 * SHA-256 of the payload), the schemas by name and encoding, and the decoded fields of the sampled messages
 * (decoding our payload with our schema). Returns what it read for format-specific checks; the caller closes.
 */
export async function checkFixture(relative: string, options: FixtureOptions = {}): Promise<FixtureRead> {
  const expected = loadExpected(relative);
  const { reader, frames } = await readAll(foreignPath(relative));
  const info = reader.getInfo();
  const schemas = reader.getSchemas();
  const startMs = expectedStartMs(expected.messages);
  assert.equal(info.startTimestamp, startMs, 'recording start: the first log time floored to the ms');
  assert.equal(info.messageCount, expected.messages.length, 'message count');
  assert.equal(info.hasCompleted, true);

  for (const topic of expected.topics) {
    const url = info.urls.find((u) => u.url === topic.topic);
    assert.ok(url, `topic ${topic.topic} listed`);
    assert.equal(url.ser, topic.type, `${topic.topic} type`);
    assert.equal(url.encoding, topic.encoding, `${topic.topic} encoding`);
    assert.equal(url.count, topic.count, `${topic.topic} count`);
    if (topic.type && topic.schema_encoding) {
      // The url's own schema where the format names one (two schemas may share a type name), else the one of its name.
      const schema =
        url.schemaIndex !== undefined ? schemas[url.schemaIndex] : schemas.find((s) => s.name === topic.type);
      if (url.schemaIndex !== undefined) assert.equal(schema?.name, topic.type, `${topic.topic} schema index`);
      assert.ok(schema, `schema ${topic.type}`);
      assert.equal(schema.encoding, topic.schema_encoding, `${topic.type} schema encoding`);
      if (topic.schema_sha256) assert.equal(sha256(schema.data), topic.schema_sha256, `${topic.type} schema bytes`);
      const definition = (topic as { message_definition_sha256?: string }).message_definition_sha256;
      if (definition) assert.equal(sha256(schema.data), definition, `${topic.type} message definition`);
    }
  }
  assert.equal(info.urls.length, new Set(expected.topics.map((t) => t.topic)).size, 'no extra urls');

  const publish = options.publishTime ?? defaultPublish;
  const sequence = options.sequence ?? defaultSequence;
  const want = expected.messages.map((m) => ({
    url: m.topic,
    timestamp: expectedUs(m.log_time_ns, startMs),
    publishTime: publish(m, startMs),
    sequence: sequence(m),
    size: m.size,
    sha256: m.sha256,
  }));
  const got = frames.map((f) => ({
    url: f.url,
    timestamp: f.timestamp,
    publishTime: f.publishTime,
    sequence: f.sequence,
    size: f.size,
    sha256: f.sha256,
  }));
  const key = (m: { url: string; timestamp: number; sha256: string }) => `${m.url} ${m.timestamp} ${m.sha256}`;
  const order = (list: typeof want) => (options.sorted ? [...list].sort((a, b) => (key(a) < key(b) ? -1 : 1)) : list);
  assert.deepEqual(order(got), order(want));

  const decoder = new PayloadDecoder({ schemas, urls: info.urls });
  for (const sample of expected.decoded) {
    const m = want[sample.index]!;
    const frame = frames.find((f) => f.url === m.url && f.timestamp === m.timestamp && f.sha256 === m.sha256);
    assert.ok(frame, `decoded sample ${sample.index} found`);
    assertFields(decoder.decodeOrThrow(frame), sample.fields, `${relative}#${sample.index}`);
  }
  return { expected, reader, info, frames, schemas, startMs };
}
