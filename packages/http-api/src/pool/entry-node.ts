// The bag pool's worker under `node:worker_threads` (Node, Deno).
import { parentLink } from '@vlink/bag';
import { serveBagWork } from './service.js';

serveBagWork(await parentLink('node'));
