import { runDriverSuite } from './driver.suite.js';

await runDriverSuite('node:sqlite');
