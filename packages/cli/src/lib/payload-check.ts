import type { BagReader, CheckProblem, CheckReport } from '@vlink/bag';

/** Payloads of one url that could not be decoded for want of a schema (or past a limit): said, not counted as damage. */
export interface NotDecoded {
  url: string;
  frames: number;
  reason: string;
}

/** A url's payloads that do not decode through its schema: how many, and the first one. */
interface Failures {
  frames: number;
  firstUs: number;
  reason: string;
}

/**
 * `check --decode`: every payload through the bag's own schemas, by the decoder `cat --decode`, the server and the
 * player use (`@vlink/bag-decode`: protobuf, ROS 1, CDR, JSON, flatbuffers, ULog). `check` proves the bytes are the
 * ones written; this proves the schemas describe them, which a reader of a foreign bag cannot take for granted (a
 * rosbag2 storage whose definitions are not those of its payloads decodes only in part, or not at all). A payload
 * that does not decode is a problem of its url (one per url: how many, the first one's time and reason); a url
 * whose type has no schema in the bag (rosbag2 before Iron stored none) is listed as not decoded, not as damage.
 */
export async function checkPayloads(
  reader: BagReader,
  report: CheckReport,
): Promise<{ report: CheckReport; notDecoded: NotDecoded[]; undecodable: number }> {
  const { PayloadDecoder } = await import('@vlink/bag-decode');
  const info = reader.getInfo();
  const decoder = new PayloadDecoder({ schemas: reader.getSchemas(), urls: info.urls });
  const failures = new Map<string, Failures>();
  const missing = new Map<string, NotDecoded>();
  const totals = new Map<string, number>();
  for await (const frame of reader.frames()) {
    totals.set(frame.url, (totals.get(frame.url) ?? 0) + 1);
    const decoded = decoder.decode(frame);
    if (decoded.kind !== 'hex' || decoded.error === undefined) continue;
    const reason = decoded.reason ?? decoded.error.message;
    // CORRUPT_DATA: the bytes do not fit their schema (or the schema does not parse). The rest (no schema embedded,
    // nested past the decoder's depth limit) says nothing about the bytes.
    if (decoded.error.code !== 'CORRUPT_DATA') {
      const entry = missing.get(frame.url) ?? { url: frame.url, frames: 0, reason };
      entry.frames++;
      missing.set(frame.url, entry);
      continue;
    }
    const entry = failures.get(frame.url) ?? { frames: 0, firstUs: frame.timestamp, reason };
    entry.frames++;
    failures.set(frame.url, entry);
  }
  const problems: CheckProblem[] = [...failures].map(([url, f]) => ({
    file: report.path,
    url,
    timeUs: f.firstUs,
    message: `${f.frames} of ${totals.get(url)} payloads do not decode; the first: ${f.reason}`,
  }));
  return {
    report: { ...report, ok: report.ok && problems.length === 0, problems: [...report.problems, ...problems] },
    notDecoded: [...missing.values()],
    undecodable: problems.length,
  };
}
