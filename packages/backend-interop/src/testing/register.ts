import { registerBackend } from '@vlink/bag-core';
import { mcapBackend } from '@vlink/bag-mcap';
import { sqliteBackend } from '@vlink/bag-sqlite';
import { interopBackends } from '../backends.js';

/** What `@vlink/bag` registers (this package cannot depend on it): our backends, and .vdb/.vcap for round trips. */
export function registerAll(): void {
  registerBackend(sqliteBackend);
  registerBackend(mcapBackend);
  for (const backend of interopBackends) registerBackend(backend);
}
