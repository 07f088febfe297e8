import { runBackendConformance } from '@vlink/bag-core/testing';
import { mcapBackend } from './backend.js';

// The shared Backend behaviour, unchanged, against .vcap: once with defaults and once with tiny chunks.
runBackendConformance({ backend: mcapBackend, extension: '.vcap' });
runBackendConformance({ backend: mcapBackend, extension: '.vcap', config: { cacheSize: 4096, enableChunkCrc: true } });
