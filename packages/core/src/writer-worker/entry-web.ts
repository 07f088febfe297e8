// The writer worker's entry as a Web Worker (Bun, browsers, Deno when asked for).
import { webParentLink } from '../runtime/parent-web.js';
import { serveWriter } from './writer-service.js';

serveWriter(webParentLink());
