import { runDriverSuite } from '../testing/driver-suite.js';

await runDriverSuite('node:sqlite');
