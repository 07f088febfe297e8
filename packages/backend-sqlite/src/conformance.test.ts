import { runBackendConformance } from '@vlink/bag-core/testing';
import { createSqliteBackend } from './backend.js';
import { loadDriver } from './driver/driver.js';

runBackendConformance({ backend: createSqliteBackend({ driver: await loadDriver() }), extension: '.vdb' });
