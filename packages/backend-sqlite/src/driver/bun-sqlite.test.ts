import { runDriverSuite } from '../testing/driver-suite.js';

await runDriverSuite('bun:sqlite');
