// The loops bench/ab-builds.mjs times, one module instance per build and format (`ab-work.mjs?build=…&format=…`), so
// no call site sees two builds or two formats.

/** Writes `frames` frames (payloads from `variants` in turn) through one build's BagWriter, then closes it. */
export async function write(bag, path, mode, frames, variants) {
  const { BagWriter, ActionType, SchemaType } = bag;
  // No summary sidecar (a read of the whole file after close that the base may not have: not the write path).
  const writer = await BagWriter.create(path, { summary: false, ...(mode === 'sync' ? { syncMode: true } : {}) });
  const frame = {
    timestamp: 0,
    url: '/bench',
    data: variants[0],
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
  if (mode === 'sync') {
    for (let i = 0; i < frames; i++) {
      frame.timestamp = i * 100;
      frame.data = variants[i % variants.length];
      if (writer.push(frame) < 0) throw new Error('frame refused');
    }
  } else {
    for (let i = 0; i < frames; i++) {
      frame.timestamp = i * 100;
      frame.data = variants[i % variants.length];
      await writer.write(frame);
    }
  }
  await writer.close();
  const dropped = writer.stats?.().dropped ?? 0;
  if (dropped > 0) throw new Error(`${dropped} frames dropped`);
}

/** Reads every frame back with the cursor, touching each payload. */
export async function read(bag, path, frames) {
  const reader = await bag.BagReader.create(path);
  let count = 0;
  let sum = 0;
  if (reader.openCursor({})) {
    for (let f = reader.next(); f; f = reader.next()) {
      count++;
      sum += f.data[f.data.length - 1];
    }
  }
  reader.close();
  if (count !== frames) throw new Error(`read ${count} of ${frames} frames`);
  return sum;
}
