// The writer worker's entry under `node:worker_threads` (Node, Deno).
import { nodeParentLink } from '../runtime/parent-node.js';
import { serveWriter } from './writer-service.js';

serveWriter(nodeParentLink());
