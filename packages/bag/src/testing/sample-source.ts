// Kept apart from write-sample.ts so the script imports the registered umbrella exactly as a user would.
export { BagWriter } from '../index.js';
export {
  sampleFrames as sampleFramesForScript,
  SAMPLE_PROTO_SCHEMA as SAMPLE_PROTO_SCHEMA_FOR_SCRIPT,
} from '@vlink/bag-core/testing';
