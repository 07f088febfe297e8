import { memoryBackend } from './memory-backend.js';
import { runBackendConformance } from './conformance.js';

// Runs the shared suite against the reference backend, so a broken suite shows up here first.
runBackendConformance({ backend: memoryBackend, extension: '.memjson' });
