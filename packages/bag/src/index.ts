/**
 * `@vlink/bag`: what users install. Importing it registers both backends, so the file extension picks the format:
 * `.vdb`/`.vdbx` SQLite (VLink's schema), `.vcap`/`.vcapx` MCAP (profile `vlink`).
 */
import { registerBackend } from '@vlink/bag-core';
import { mcapBackend } from '@vlink/bag-mcap';
import { sqliteBackend } from '@vlink/bag-sqlite';

registerBackend(sqliteBackend);
registerBackend(mcapBackend);

export * from '@vlink/bag-core';
export { sqliteBackend, mcapBackend };
