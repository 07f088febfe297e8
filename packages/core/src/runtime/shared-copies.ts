/**
 * Whether copies into and out of a `SharedArrayBuffer` are slow unless source and target are aligned alike. V8 (Node,
 * Deno, Chromium) copies shared memory with relaxed atomics: a word at a time only where source and target addresses
 * are equal modulo 8, byte by byte elsewhere, about 7× slower (16 KiB: 0.46 µs aligned, 3.4 µs not; Node 20 and Deno
 * 2.9 alike). JavaScriptCore (Bun) copies shared memory like any other. Where this is true the writer copies payloads
 * through an aligned plain buffer (`writer/frame-batch.ts`); on Bun that extra copy would only cost.
 */
export const sharedCopiesNeedAlignment: boolean = typeof (globalThis as { Bun?: unknown }).Bun === 'undefined';
