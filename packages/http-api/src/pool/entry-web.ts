// The bag pool's worker as a Web Worker (Bun).
import { parentLink } from '@vlink/bag';
import { serveBagWork } from './service.js';

serveBagWork(await parentLink('web'));
