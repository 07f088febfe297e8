import { isRemotePath, stageUrl, type UrlStaging } from '../backend/byte-source.js';
import type { BagError } from '../errors.js';
import { writeSummarySidecar } from './summary-sidecar.js';

/**
 * Where a recording's bytes go and what follows the closed file: the backend writes `localPath` (the bag itself, or
 * for a url such as `s3://…` a local staging copy, uploaded per closed segment and at close), then the summary
 * sidecar is written and the staging copy uploaded, each once.
 */
export class RecordingOutput {
  private summary: boolean;
  private staging: UrlStaging | undefined;

  private constructor(
    readonly path: string,
    readonly localPath: string,
    staging: UrlStaging | undefined,
    summary: boolean,
  ) {
    this.staging = staging;
    this.summary = summary;
  }

  static async prepare(path: string, summary: boolean): Promise<RecordingOutput> {
    const staging = isRemotePath(path) ? await stageUrl(path) : undefined;
    return new RecordingOutput(path, staging?.localPath ?? path, staging, summary);
  }

  /** A segment of a split recording closed (`file`, the closed one): a url's staging uploads it now. */
  segmentClosed(file: string): void {
    this.staging?.segmentClosed(file);
  }

  /**
   * After the file closed: the summary sidecar (a failure goes to `report`, the recording itself is complete), then
   * the upload, which rejects when it fails: the object is then absent (never half there) and the staging copy kept.
   */
  async finish(lastError: BagError | undefined, report: (error: BagError) => void): Promise<void> {
    if (this.summary) {
      this.summary = false;
      const error = await writeSummarySidecar(this.localPath, this.path, lastError);
      if (error) report(error);
    }
    const staging = this.staging;
    this.staging = undefined;
    await staging?.commit();
  }
}
