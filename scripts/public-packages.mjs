// The published packages (folders under packages/), in dependency order: one list for the API report, the
// packaging check and the install check, so a new package cannot be checked by one and forgotten by another.
export const PUBLIC = [
  'core',
  'decode',
  'backend-sqlite',
  'backend-mcap',
  'backend-interop',
  'storage-s3',
  'bag',
  'align',
  'lake',
  'http-api',
  'cli',
];
