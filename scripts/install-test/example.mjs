// The 20-line example every install flavour runs: record 1000 frames to .vdb and .vcap, read them back, check bytes.
import { BagReader, BagWriter, createFrame } from '@vlink/bag';

const payload = (i) => Uint8Array.from({ length: 32 + (i % 64) }, (_, k) => (i * 31 + k) & 0xff);
for (const path of ['example.vdb', 'example.vcap']) {
  const writer = await BagWriter.create(path, { compress: 'auto' });
  for (let i = 0; i < 1000; i++)
    writer.push(createFrame({ timestamp: i * 1000, url: `dds://u${i % 3}`, data: payload(i), serType: 'raw' }));
  await writer.close();
  const reader = await BagReader.create(path);
  let i = 0;
  for await (const frame of reader.frames()) {
    const want = payload(i);
    if (frame.timestamp !== i * 1000 || frame.data.length !== want.length || frame.data.some((b, k) => b !== want[k]))
      throw new Error(`${path}: frame ${i} differs`);
    i++;
  }
  if (i !== 1000 || reader.getInfo().messageCount !== 1000) throw new Error(`${path}: read ${i} frames`);
  reader.close();
  console.log(`${path}: 1000 frames round-tripped`);
}
