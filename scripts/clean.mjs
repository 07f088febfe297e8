#!/usr/bin/env node
// Removes the build output folders named on the command line (packages/testing's `build` starts with this; the
// others build through build-package.mjs, which does the same for dist and dist-test), so that a file deleted or
// moved in `src` cannot live on in a build folder, and no test compiled by an older build is left behind.
import { rmSync } from 'node:fs';

for (const dir of process.argv.slice(2)) rmSync(dir, { recursive: true, force: true });
