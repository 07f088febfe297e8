import { after, before } from '@vlink/fixtures/test';
import { BagReader } from '@vlink/bag';
import { tempDir, writeBag } from './harness.js';

/**
 * The setup most CLI test files share: a temp dir (removed after the file) with the fixture recording written as
 * `drive.vdb` and `drive.vcap` before the file's tests run.
 */
export function sampleBags(): { tmp: ReturnType<typeof tempDir>; vdb: string; vcap: string } {
  const tmp = tempDir();
  const vdb = tmp.path('drive.vdb');
  const vcap = tmp.path('drive.vcap');
  before(async () => {
    await writeBag(vdb);
    await writeBag(vcap);
  });
  after(() => tmp.cleanup());
  return { tmp, vdb, vcap };
}

/** Opens the bag, hands the reader to `read`, and closes it whatever `read` does. */
export async function withReader<T>(path: string, read: (reader: BagReader) => T): Promise<T> {
  const reader = await BagReader.create(path);
  try {
    return read(reader);
  } finally {
    reader.close();
  }
}
