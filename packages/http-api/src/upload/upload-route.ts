import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, lstatSync, mkdirSync, openSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { BagError, BagReader, bagExtensionOf } from '@vlink/bag';
import { toErrorResponse } from '../http/errors.js';
import { isInside } from '../store/resolve-id.js';

/** Largest upload accepted when nothing else is configured: 2 GiB. `VLINK_BAG_MAX_UPLOAD_BYTES` changes it. */
export const DEFAULT_MAX_UPLOAD_BYTES = 2 * 1024 * 1024 * 1024;
/**
 * Single-file formats only: a split recording (.vdbx/.vcapx) and a rosbag2 folder are several files and cannot arrive
 * in one body. The foreign ones (ROS 1, PX4 ULog, Apollo records, also numbered `x.record.00000`) are read-only, so a
 * notebook can hand the server a recording it got elsewhere; a lone rosbag2 `.db3` is left out, its bag is a folder.
 */
export const UPLOAD_EXTENSIONS = new Set(['.vcap', '.vdb', '.mcap', '.bag', '.ulg', '.record']);

export interface UploadOptions {
  /** The served root, as a real path. */
  root: string;
  /** The server's token: without one, uploads are refused (the route never writes for anonymous callers). */
  token: string | undefined;
  /** Default: `VLINK_BAG_MAX_UPLOAD_BYTES` from the environment, else {@link DEFAULT_MAX_UPLOAD_BYTES}. */
  maxBytes?: number;
}

/** The longest file name (bytes, one path component) the common filesystems take. */
const MAX_NAME_BYTES = 255;

type Failure = { status: number; code: string; message: string };
const fail = (status: number, code: string, message: string): Failure => ({ status, code, message });

/** A plain relative path of plain names (the same rule as bag ids), with a single-file bag extension. */
function checkId(id: string): Failure | undefined {
  const plain =
    id.length > 0 &&
    id.length <= 1024 &&
    !id.includes('\0') &&
    !id.includes('\\') &&
    !isAbsolute(id) &&
    !/^[a-zA-Z]:/.test(id) &&
    id.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && !part.startsWith('.'));
  if (!plain) return fail(400, 'INVALID_ARGUMENT', `id "${id}" is not a relative path of plain names`);
  // Longer names than the filesystems take (255 bytes per name on Linux, macOS and Windows) would fail deep in mkdir
  // or link as a server error; they are the client's to fix.
  if (id.split('/').some((part) => new TextEncoder().encode(part).length > MAX_NAME_BYTES))
    return fail(400, 'INVALID_ARGUMENT', `id "${id}" has a name longer than ${MAX_NAME_BYTES} bytes`);
  if (!UPLOAD_EXTENSIONS.has(bagExtensionOf(id)))
    return fail(400, 'INVALID_ARGUMENT', `id must end with ${[...UPLOAD_EXTENSIONS].join(', ')}`);
  return undefined;
}

function configuredLimit(options: UploadOptions): number {
  if (options.maxBytes !== undefined) return options.maxBytes;
  const fromEnv = Number(globalThis.process?.env?.['VLINK_BAG_MAX_UPLOAD_BYTES']);
  return Number.isSafeInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_MAX_UPLOAD_BYTES;
}

/** The target's directory, created inside the root; each existing level is checked after symlinks are resolved. */
function targetDirectory(root: string, id: string): string | Failure {
  let dir = root;
  for (const part of id.split('/').slice(0, -1)) {
    dir = join(dir, part);
    try {
      mkdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const real = realpathSync(dir);
    if (!isInside(root, real) || !lstatSync(real).isDirectory())
      return fail(404, 'NOT_FOUND', `"${id}" would leave the served root`);
    dir = real;
  }
  return dir;
}

/**
 * `PUT /v1/bags/{id}`: stores the request body as a new bag under the root, so a notebook can save results back.
 * Needs the server's token (refused on a server without one), never overwrites (409 `ALREADY_EXISTS`), stays inside
 * the root (no `..`, no absolute path, no dot-files, symlinked directories leading out refused), bounds the size
 * (413 `TOO_LARGE`, checked on `Content-Length` and while streaming), and keeps only a body that opens as a bag of its
 * extension (else 422 with the reader's error). The body streams to a hidden temporary file next to the target, which
 * is then hard-linked to the target name (atomic, and it fails if the name exists), so a partial or refused upload
 * never appears under the id.
 */
export function registerUpload(app: OpenAPIHono, options: UploadOptions): void {
  app.put('/v1/bags/:id', async (c) => {
    const answer = (f: Failure) => c.json({ error: { code: f.code, message: f.message } }, f.status as 400);
    if (options.token === undefined)
      return answer(fail(403, 'UNAUTHORIZED', 'uploads need a server started with a token (--token)'));
    const id = c.req.param('id');
    const bad = checkId(id);
    if (bad) return answer(bad);
    const limit = configuredLimit(options);
    const declared = Number(c.req.header('content-length'));
    if (Number.isFinite(declared) && declared > limit)
      return answer(fail(413, 'TOO_LARGE', `the upload is ${declared} bytes; this server accepts at most ${limit}`));
    const dir = targetDirectory(options.root, id);
    if (typeof dir !== 'string') return answer(dir);
    const name = id.slice(id.lastIndexOf('/') + 1);
    const target = join(dir, name);
    const exists = () => {
      try {
        lstatSync(target);
        return true;
      } catch {
        return false;
      }
    };
    if (exists()) return answer(fail(409, 'ALREADY_EXISTS', `"${id}" exists already; uploads never overwrite`));
    // The temporary name ends with the bag extension (`.record` for `x.record.00000` too), so it opens as the id would,
    // and is short whatever the id: a name of the longest legal length plus a suffix would be too long to create.
    const extension = bagExtensionOf(name);
    const temp = join(dir, `.upload-${randomBytes(8).toString('hex')}${extension}`);
    const fd = openSync(temp, 'wx', 0o644);
    let size = 0;
    try {
      try {
        const body = c.req.raw.body;
        if (body) {
          const reader = body.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            size += value.byteLength;
            if (size > limit) {
              await reader.cancel().catch(() => undefined);
              return answer(fail(413, 'TOO_LARGE', `the upload exceeds ${limit} bytes`));
            }
            for (let at = 0; at < value.byteLength; ) at += writeSync(fd, value, at);
          }
        }
      } finally {
        closeSync(fd);
      }
      if (size === 0) return answer(fail(400, 'INVALID_ARGUMENT', 'the upload is empty'));
      let summary: { messageCount: number };
      try {
        const reader = await BagReader.create(temp, { confineTo: options.root });
        try {
          summary = { messageCount: reader.getInfo().messageCount };
        } finally {
          reader.close();
        }
      } catch (error) {
        // The temporary name never reaches the client: it is reported as the id the upload asked for.
        const { body } = toErrorResponse(error, {
          text: (text) => text.split(temp).join(id),
          path: (path) => (path === temp ? id : undefined),
        });
        return answer(fail(422, body.error.code, `not a readable ${extension} bag: ${body.error.message}`));
      }
      try {
        linkSync(temp, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST')
          return answer(fail(409, 'ALREADY_EXISTS', `"${id}" exists already; uploads never overwrite`));
        throw BagError.wrap(error, 'IO_ERROR', `cannot store "${id}"`);
      }
      return c.json({ id, format: extension.slice(1), size, messageCount: summary.messageCount }, 201);
    } finally {
      try {
        unlinkSync(temp);
      } catch {
        // already gone
      }
    }
  });
}
