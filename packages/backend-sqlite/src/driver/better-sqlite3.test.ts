import { runDriverSuite } from './driver.suite.js';

await runDriverSuite('better-sqlite3');
