import assert from 'node:assert/strict';
import { test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { isBun, loadDriver, pickDriver, type DriverName } from './driver.js';

const runtime = isBun() ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node';

test('loadDriver picks the runtime’s driver (or VLINK_SQLITE_DRIVER) and caches it', async () => {
  const driver = await loadDriver();
  const forced = process.env['VLINK_SQLITE_DRIVER'];
  if (forced) assert.equal(driver.name, forced);
  else if (runtime === 'bun') assert.equal(driver.name, 'bun:sqlite');
  else if (runtime === 'deno') assert.equal(driver.name, 'node:sqlite');
  else assert.ok(driver.name === 'node:sqlite' || driver.name === 'better-sqlite3');
  assert.equal(await loadDriver(), driver);
});

test('no loadable driver → DRIVER_MISSING that names the package to install', async () => {
  const absent: DriverName = runtime === 'bun' ? 'better-sqlite3' : 'bun:sqlite';
  await assert.rejects(pickDriver([absent]), (error: unknown) => {
    assert.ok(BagError.isInstance(error));
    assert.equal(error.code, 'DRIVER_MISSING');
    assert.match(error.message, /npm install better-sqlite3@12/);
    return true;
  });
});
