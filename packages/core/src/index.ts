export { BagError } from './errors.js'; export type { BagErrorCode, BagErrorContext } from './errors.js';
