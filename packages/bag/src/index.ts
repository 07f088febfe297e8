/**
 * `@vlink/bag`: what users install. Importing it registers every backend, so the file extension (or, for foreign
 * files without one, the content) picks the format: `.vdb`/`.vdbx` SQLite (VLink's schema), `.vcap`/`.vcapx` MCAP
 * (profile `vlink`), and read-only `.mcap`, ROS 1 `.bag`, ROS 2 bag folders/`.db3`, Apollo `.record`, PX4 `.ulg`.
 */
import { registerBackend } from '@vlink/bag-core';
import { interopBackends } from '@vlink/bag-interop/backends';
import { mcapBackend } from '@vlink/bag-mcap';
import { sqliteBackend } from '@vlink/bag-sqlite';

registerBackend(sqliteBackend);
registerBackend(mcapBackend);
for (const backend of interopBackends) registerBackend(backend);

export * from '@vlink/bag-core';
export { sqliteBackend, mcapBackend, interopBackends };
