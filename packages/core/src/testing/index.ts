export { createTestContext } from './context.js';
export { noiseBytes, patternBytes, sampleFrames, SAMPLE_PROTO_SCHEMA } from './sample-frames.js';
export { memoryBackend } from './memory-backend.js';
export { writeFrame } from './write-frame.js';
export { runBackendConformance } from './conformance.js';
export type { ConformanceOptions } from './conformance.js';
export { runSplitRecoveryConformance } from './split-recovery.js';
export type { SplitRecoveryOptions } from './split-recovery.js';
