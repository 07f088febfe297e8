import { ActionType, BagReader, type Frame, SchemaType } from '@vlink/bag';

// What the S3 tests record and read back (the same bag locally and on S3 must read the same).

/** 6000 frames of 1–3 KiB on three urls over 6 s (two urls with a protobuf ser): several chunks or segments. */
export function recordedFrames(): Frame[] {
  return Array.from({ length: 6000 }, (_, i) => ({
    timestamp: 1_000 + i * 1_000,
    url: ['/lidar', '/pose', '/log'][i % 3]!,
    data: Uint8Array.from({ length: 1024 + ((i * 37) % 2048) }, (_, j) => (i * 7 + j * 13) & 0xff),
    serType: i % 3 === 2 ? 'text' : 'pb.Pose',
    schemaType: i % 3 === 2 ? SchemaType.Raw : SchemaType.Protobuf,
    actionType: ActionType.Publish,
  }));
}

/** A bag's info, schemas and every frame (payloads copied). */
export async function readBag(path: string) {
  const reader = await BagReader.create(path);
  try {
    const got: Frame[] = [];
    for await (const f of reader.frames()) got.push({ ...f, data: f.data.slice() });
    return { info: reader.getInfo(), schemas: reader.getSchemas(), frames: got };
  } finally {
    reader.close();
  }
}
