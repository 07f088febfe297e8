export { checkVcap, fixVcap } from './fix-file.js';
export type { VcapMaintenanceOptions } from './fix-file.js';
export { checkVcapReadable } from './check.js';
export type { VcapCheckReport } from './check.js';
export { rebuildVcap } from './rebuild.js';
export type { VcapFixReport } from './fix-report.js';
