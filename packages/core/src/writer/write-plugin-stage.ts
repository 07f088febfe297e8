import type { Frame } from '../model/frame.js';
import { type BagPluginInterface, PluginDirection, UrlRemapCache } from '../plugins/bag-plugin.js';
import { checkPlugin } from '../util/callback-check.js';

/**
 * A writer's write plugin: it sees every accepted frame first (`onWrite`; what it emits is stored as emitted), and
 * renames or drops urls (`convertUrlMeta`, asked once per url and type). The renames are remembered for the writer's
 * life, across re-binds, because VLink writes a url's loss at close under every name the url was stored as.
 */
export class WritePluginStage {
  /**
   * The bound plugin; undefined (the common case) when none is. A field, not a getter: the writer reads it for every
   * frame, and without a plugin that read is all a frame has to do with this stage (`route` is not called then).
   */
  plugin: BagPluginInterface | undefined;
  private remap: UrlRemapCache | undefined;
  private readonly renamed = new Map<string, Set<string>>();
  private readonly losses = new Map<string, number>();

  /** Binds `plugin` (undefined unbinds); what it emits goes to `store`. */
  bind(plugin: BagPluginInterface | undefined, store: (frame: Frame) => void): void {
    checkPlugin(plugin);
    this.plugin?.detach();
    this.plugin = plugin;
    this.remap = plugin ? new UrlRemapCache(plugin) : undefined;
    if (!plugin) return;
    plugin.attach(PluginDirection.Write, store);
    plugin.onReset();
  }

  /** The frame under the url the plugin stores it as (the frame itself without a plugin); null: the url is dropped. */
  route(frame: Frame): Frame | null {
    if (!this.remap) return frame;
    const url = this.remap.map(frame.url, frame.serType, frame.schemaType);
    if (url === null || url === frame.url) return url === null ? null : frame;
    let names = this.renamed.get(frame.url);
    if (!names) this.renamed.set(frame.url, (names = new Set()));
    names.add(url);
    return { ...frame, url };
  }

  /** `setUrlLoss`: remembered for the names the url is renamed to by close. */
  setLoss(url: string, loss: number): void {
    this.losses.set(url, loss);
  }

  /** At quit: a buffering plugin hands over what it holds, and each loss goes to every name its url was renamed to. */
  quit(setUrlLoss: (url: string, loss: number) => void): void {
    this.plugin?.flush();
    for (const [url, loss] of this.losses) for (const renamed of this.renamed.get(url) ?? []) setUrlLoss(renamed, loss);
  }
}
