import { runDriverSuite } from './driver.suite.js';

await runDriverSuite('bun:sqlite');
