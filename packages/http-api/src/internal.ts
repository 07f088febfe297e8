// `@vlink/bag-server/internal`: what our own CLI uses besides the public API. Unstable, no semver promise (as
// `@vlink/bag-core/internal`): exported only because the CLI is a separate package.
export { serveFoxgloveFeed } from './foxglove/feed-server.js';
export type { FoxgloveFeedOptions, FoxgloveFeedServer } from './foxglove/feed-server.js';
