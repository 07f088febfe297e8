#!/usr/bin/env node
// The `vlink-bag` bin. npm links bins at install time, when dist/ does not exist yet (npm skips a bin whose file is
// missing), so the link points at this committed file, which runs the built CLI.
try {
  await import('../dist/bin.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/bin.js')) {
    process.stderr.write('vlink-bag: the CLI is not built yet; run `npm run build` first\n');
    process.exit(1);
  }
  throw error;
}
