import { runDriverSuite } from '../testing/driver-suite.js';

await runDriverSuite('better-sqlite3');
