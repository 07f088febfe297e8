import { bagExtensionOf, findBackend, type Info, type SchemaData } from '@vlink/bag';
import type { ResolvedBag } from '../store/resolve-id.js';
import type {
  BagFacts,
  BagWork,
  DensityRequest,
  PageRequest,
  ReportRequest,
  StreamRequest,
  TimingRequest,
} from './bag-work.js';

/** Bags whose info and schemas the server keeps (LRU); both are small and asked for on every player visit. */
const MEMO_ENTRIES = 256;

interface Memo {
  size: number;
  mtimeMs: number;
  info?: Promise<Info>;
  schemas?: Promise<SchemaData[]>;
}

/**
 * Sends each bag's work to the pool when its backend can be loaded in a worker (`Backend.workerModule`), else does
 * it on this thread; keeps the answers to `info` and `schemas` per file version so listing and players do not go
 * to a worker each time. A failure is not kept (the file may be fixed or finish recording).
 */
export class RoutedWork implements BagWork {
  private readonly memo = new Map<string, Memo>();

  constructor(
    private readonly local: BagWork,
    private readonly pooled: BagWork | undefined,
    /** Whether the pool can read bags of this extension (workers start, and load its backend). */
    private readonly pooledAvailable: (extension: string) => boolean,
  ) {}

  /** `path` is the id asked with (two ids can name one file through a symlink inside the root). */
  async info(bag: ResolvedBag): Promise<Info> {
    const info = await this.remember(bag, 'info', () => this.of(bag).info(bag));
    return { ...info, path: bag.id };
  }

  schemas(bag: ResolvedBag): Promise<SchemaData[]> {
    return this.remember(bag, 'schemas', () => this.of(bag).schemas(bag));
  }

  /** The bags of the pool in one call to it, the others on this thread, each answer in its bag's place. */
  async facts(bags: readonly ResolvedBag[]): Promise<BagFacts[]> {
    const inPool = bags.map((bag) => this.isPooled(bag));
    const pooled = bags.filter((_, i) => inPool[i]);
    const local = bags.filter((_, i) => !inPool[i]);
    const [fromPool, fromHere] = await Promise.all([
      pooled.length > 0 ? this.pooled!.facts(pooled) : [],
      local.length > 0 ? this.local.facts(local) : [],
    ]);
    let p = 0;
    let l = 0;
    return inPool.map((pool) => (pool ? fromPool[p++]! : fromHere[l++]!));
  }

  attachment(bag: ResolvedBag, index: number): Promise<Uint8Array> {
    return this.of(bag).attachment(bag, index);
  }

  timing(bag: ResolvedBag, request: TimingRequest, signal?: AbortSignal): Promise<string> {
    return this.of(bag).timing(bag, request, signal);
  }

  report(bag: ResolvedBag, request: ReportRequest, signal?: AbortSignal): Promise<string> {
    return this.of(bag).report(bag, request, signal);
  }

  density(bag: ResolvedBag, request: DensityRequest, signal?: AbortSignal): Promise<string> {
    return this.of(bag).density(bag, request, signal);
  }

  page(bag: ResolvedBag, request: PageRequest, signal?: AbortSignal): Promise<string> {
    return this.of(bag).page(bag, request, signal);
  }

  stream(bag: ResolvedBag, request: StreamRequest): Promise<ReadableStream<Uint8Array>> {
    return this.of(bag).stream(bag, request);
  }

  async close(): Promise<void> {
    this.memo.clear();
    await Promise.all([this.local.close(), this.pooled?.close()]);
  }

  /** Whether this bag's work runs in a worker thread. */
  isPooled(bag: ResolvedBag): boolean {
    return (
      this.pooled !== undefined &&
      findBackend(bag.path)?.workerModule !== undefined &&
      this.pooledAvailable(bagExtensionOf(bag.path))
    );
  }

  private of(bag: ResolvedBag): BagWork {
    return this.isPooled(bag) ? this.pooled! : this.local;
  }

  private remember<K extends 'info' | 'schemas'>(
    bag: ResolvedBag,
    key: K,
    make: () => NonNullable<Memo[K]>,
  ): NonNullable<Memo[K]> {
    let entry = this.memo.get(bag.path);
    if (entry && (entry.size !== bag.size || entry.mtimeMs !== bag.mtimeMs)) entry = undefined;
    if (!entry) entry = { size: bag.size, mtimeMs: bag.mtimeMs };
    this.memo.delete(bag.path);
    this.memo.set(bag.path, entry);
    while (this.memo.size > MEMO_ENTRIES) this.memo.delete(this.memo.keys().next().value!);
    const existing = entry[key];
    if (existing) return existing as NonNullable<Memo[K]>;
    const made = make();
    const kept = entry;
    kept[key] = made;
    (made as Promise<unknown>).catch(() => {
      if (kept[key] === made) kept[key] = undefined;
    });
    return made;
  }
}
