/** This package's version, reported by `GET /v1/health` unless `createApp({ version })` overrides it. */
export const SERVER_VERSION = '0.1.0';
