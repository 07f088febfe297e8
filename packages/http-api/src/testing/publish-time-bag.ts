import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';

/** When frame `i` of {@link writePublishTimeBag} was sampled: every odd frame 25 ms before it was logged. */
export const publishTimeOf = (i: number): number => i * 10_000 - (i % 2 ? 25_000 : 0);

/**
 * A bag of 20 frames on url `a` whose publish times are out of log order: logged every 10 ms, every odd frame
 * sampled 25 ms before it was logged (`publishTimeOf`), payload the frame's index. Returns its folder.
 */
export async function writePublishTimeBag(name: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-publish-'));
  const writer = await BagWriter.create(join(dir, name), { syncMode: true });
  for (let i = 0; i < 20; i++)
    writer.push({
      timestamp: i * 10_000,
      publishTime: publishTimeOf(i),
      url: 'a',
      data: new Uint8Array([i]),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
  return dir;
}
