#!/usr/bin/env node
// The repository stands on its own: no tracked file may point outside it. A clone on a user's machine has nothing
// beside it, so a fixture, spec or script found through `../shared`, an absolute path of a developer's machine, or a
// relative path that climbs above the root would work here and fail there.
// Checks every tracked text file (git ls-files); prints each offending line and exits 1 if there is one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);

/** Names of the outside folders earlier sessions depended on, and absolute paths of the machines we work on. */
const FORBIDDEN = [/VLINK_SHARED_DIR/, /\bshared\/(spec|fixtures|hooks)\b/, /(^|[\s'"`(])\/(work|root|home)\/[\w.-]/];
/** A relative path (`../x`, `../../x`) in a link, an import or a string: it must resolve inside the repository. */
const RELATIVE = /(?:^|[\s'"`(=])((?:\.\.\/)+)([\w@.-][\w@./-]*)/g;
// This file spells the patterns it looks for.
const SELF = relative(root, import.meta.filename);

const problems = [];
for (const file of files) {
  if (file === SELF || file === 'package-lock.json' || !existsSync(join(root, file))) continue;
  const bytes = readFileSync(join(root, file));
  if (bytes.includes(0)) continue; // binary
  const lines = bytes.toString('utf8').split('\n');
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    for (const pattern of FORBIDDEN) {
      if (pattern.test(line)) problems.push(`${where}: ${line.trim().slice(0, 160)}`);
    }
    for (const match of line.matchAll(RELATIVE)) {
      const target = resolve(dirname(join(root, file)), match[1] + match[2]);
      if (target !== root && !target.startsWith(root + sep)) {
        problems.push(`${where}: "${match[1]}${match[2]}" leaves the repository`);
      }
    }
  });
}

if (problems.length > 0) {
  console.error(`not ok - ${problems.length} reference(s) to paths outside the repository:\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`ok - ${files.length} tracked files refer to nothing outside the repository`);
