import assert from 'node:assert/strict';
import { BagReader, BagWriter, type BagWriterOptions, type CarriedRecords, type Info } from '@vlink/bag-core';
import { foreignRecordings } from '@vlink/fixtures';

/** Every sound foreign recording, one per format variant (fixtures/foreign; the list is `@vlink/fixtures`'). */
export const FIXTURES = foreignRecordings.map((recording) => recording.name);

/** What `clone` carries from a source (the CLI's header-copy does the same): header, records, url encodings. */
export function carryOf(reader: BagReader, info: Info): Partial<BagWriterOptions> {
  const urlEncodings: Record<string, string> = {};
  for (const meta of info.urls) if (meta.encoding) urlEncodings[meta.url] ??= meta.encoding;
  const carry: CarriedRecords = {
    ...(info.metadata?.length ? { metadata: info.metadata } : {}),
    ...(info.attachments?.length
      ? { attachments: info.attachments.map((a) => ({ ...a, data: reader.getAttachment(a.index) })) }
      : {}),
    urlEncodings,
  };
  return { tagName: info.tagName, processName: info.processName, timezone: info.timezone, carry };
}

/** Copies a bag with BagReader + BagWriter (what `clone` does): same start, every schema, every frame. */
export async function copyBag(from: string, to: string, withCarry = false): Promise<void> {
  const reader = await BagReader.create(from);
  const info = reader.getInfo();
  const writer = await BagWriter.create(to, {
    ...(withCarry ? carryOf(reader, info) : {}),
    startTimestamp: info.startTimestamp,
    syncMode: true,
  });
  try {
    for (const schema of reader.getSchemas()) writer.pushSchema(schema);
    for await (const frame of reader.frames()) assert.notEqual(writer.push(frame), -1);
  } finally {
    await writer.close();
    reader.close();
  }
  assert.equal(writer.fail(), false);
  assert.ok(
    Object.values(writer.stats().dropped).every((n) => n === 0),
    `nothing dropped: ${JSON.stringify(writer.stats().dropped)}`,
  );
}
