import { BagReader } from '../packages/bag/dist/index.js';
const reader = await BagReader.create(process.argv[2], { tryToFix: process.argv[3] === 'fix' });
console.log(reader.getInfo().startTimestamp, reader.getInfo().totalDuration);
for await (const f of reader.frames()) console.log(f.url, f.timestamp, f.publishTime, f.data.byteLength);
reader.close();
