import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { workerExecArgv } from './exec-argv.js';

describe('workerExecArgv', () => {
  test('drops the flags that describe the parent script, keeps module loading flags', () => {
    assert.deepEqual(
      workerExecArgv([
        '--input-type=module',
        '--eval',
        'code',
        '-p',
        '--test',
        '--watch',
        '--inspect=9229',
        '--import',
        'tsx',
        '--import=./hooks.mjs',
        '-r',
        'dotenv/config',
        '--conditions=development',
        '--experimental-strip-types',
        '--no-experimental-global-navigator',
        '--enable-source-maps',
        '--no-warnings',
        '--max-old-space-size=64',
      ]),
      [
        '--import',
        'tsx',
        '--import=./hooks.mjs',
        '-r',
        'dotenv/config',
        '--conditions=development',
        '--experimental-strip-types',
        '--no-experimental-global-navigator',
        '--enable-source-maps',
        '--no-warnings',
      ],
    );
    assert.deepEqual(workerExecArgv([]), []);
    assert.deepEqual(workerExecArgv(['--import']), [], 'a flag missing its value is dropped');
  });
});
