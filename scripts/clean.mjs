#!/usr/bin/env node
// Removes the build output folders named on the command line (each package's `build` script starts with this, for
// dist and dist-test), so that a file deleted or moved in `src` cannot live on in `dist` and be packed, and no test
// compiled by an older build is left where the product is.
import { rmSync } from 'node:fs';

for (const dir of process.argv.slice(2)) rmSync(dir, { recursive: true, force: true });
