import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import type { Backend } from './backend.js';
import {
  backendFor,
  bagExtensionOf,
  detectBackend,
  findBackend,
  registerBackend,
  registeredExtensions,
  registeredNumberedExtensions,
} from './registry.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-registry-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function fake(name: string, extensions: string[], extra: Partial<Backend> = {}): Backend {
  const refuse = () => Promise.reject(new BagError('NOT_SUPPORTED', `${name} is a test double`));
  return { name, extensions, createWriter: refuse, openReader: refuse, ...extra };
}

const writing = fake('reg-writer', ['.regw']);
const foreign = fake('reg-foreign', ['.regw', '.regf'], {
  readOnly: true,
  magic: [new Uint8Array([0xfe, 0x01, 0x02, 0x03, 0x04, 0x05])],
});
const folder = fake('reg-folder', ['.regd'], {
  readOnly: true,
  directoryMarker: 'bag.marker',
  directoryFiles: /^.+_\d+\.regd$/,
});
const segmented = fake('reg-segmented', ['.regs'], { readOnly: true, numberedSegments: true });
registerBackend(writing);
registerBackend(segmented);
registerBackend(foreign);
registerBackend(folder);

describe('backend registry', () => {
  test('a read-only backend claims its extensions for reading only; a writer keeps writing a shared one', () => {
    assert.equal(findBackend('x.regw'), foreign, 'the later registration reads');
    assert.equal(findBackend('x.regw', 'write'), writing);
    assert.equal(findBackend('x.regf', 'write'), undefined);
    assert.ok(registeredExtensions().includes('.regf'));
    assert.ok(!registeredExtensions('write').includes('.regf'));
    assert.throws(
      () => backendFor('x.regf', 'write'),
      (e: BagError) => {
        assert.equal(e.code, 'UNSUPPORTED_FORMAT');
        assert.match(e.message, /\.regf is read-only/);
        return true;
      },
    );
  });

  test('a backend with numbered segments reads `<name><ext>.<digits>`; no other backend, nor a writer, does', () => {
    assert.equal(findBackend('/rec/x.regs.00000'), segmented);
    assert.equal(findBackend('C:\\rec\\x.REGS.12'), segmented);
    assert.equal(backendFor('x.regs.7'), segmented);
    assert.equal(findBackend('x.regs.00000', 'write'), undefined);
    assert.equal(findBackend('x.regf.00000'), undefined, 'segment numbers only where the backend declares them');
    assert.equal(findBackend('x.regs.0a'), undefined);
    assert.equal(findBackend('/rec.regs/00000'), undefined, 'a number after a slash is a file name, not a segment');
    assert.equal(bagExtensionOf('/rec/x.regs.00000'), '.regs', 'the extension it is read by');
    assert.equal(bagExtensionOf('x.regf.00000'), '.00000');
    assert.equal(bagExtensionOf('x.regf'), '.regf');
    assert.ok(registeredNumberedExtensions().includes('.regs'));
    assert.ok(!registeredNumberedExtensions().includes('.regf'));
  });

  test('detectBackend: the extension first, then the magic of a file, then the marker of a directory', async () => {
    assert.equal(await detectBackend(join(dir, 'missing.regf')), foreign, 'by extension, without touching the disk');
    const sniffed = join(dir, 'no-extension');
    writeFileSync(sniffed, new Uint8Array([0xfe, 0x01, 0x02, 0x03, 0x04, 0x05, 0x99]));
    assert.equal(await detectBackend(sniffed), foreign);
    const short = join(dir, 'short.bin');
    writeFileSync(short, new Uint8Array([0xfe, 0x01, 0x02]));
    await assert.rejects(detectBackend(short), { code: 'UNSUPPORTED_FORMAT' });
    const other = join(dir, 'other.bin');
    writeFileSync(other, new Uint8Array([0xfe, 0x01, 0x02, 0x03, 0x04, 0x06]));
    await assert.rejects(detectBackend(other), { code: 'UNSUPPORTED_FORMAT' });
    const bagDir = join(dir, 'a-bag');
    mkdirSync(bagDir);
    await assert.rejects(detectBackend(bagDir), { code: 'UNSUPPORTED_FORMAT' }, 'a directory without the marker');
    writeFileSync(join(bagDir, 'a-bag.regd'), '');
    await assert.rejects(
      detectBackend(bagDir),
      { code: 'UNSUPPORTED_FORMAT' },
      'a file its directoryFiles do not name',
    );
    // Without the marker (a recording that crashed before writing it), the files the backend names.
    writeFileSync(join(bagDir, 'a-bag_0.regd'), '');
    assert.equal(await detectBackend(bagDir), folder);
    rmSync(join(bagDir, 'a-bag_0.regd'));
    writeFileSync(join(bagDir, 'bag.marker'), '');
    assert.equal(await detectBackend(bagDir), folder);
    assert.equal(await detectBackend(`${bagDir}/`), folder);
    await assert.rejects(detectBackend(join(dir, 'nothing-here')), { code: 'UNSUPPORTED_FORMAT' });
  });
});
