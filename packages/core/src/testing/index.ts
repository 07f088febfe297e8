export { sharedFixturesDir } from './fixtures.js';
export { createTestContext } from './context.js';
