export { sharedFixturesDir } from './fixtures.js';
