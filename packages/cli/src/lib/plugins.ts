import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Option, type Command } from 'commander';
import * as bag from '@vlink/bag';
import type { BagPluginInterface, SchemaCallback, SchemaData } from '@vlink/bag';
import { CliError } from './errors.js';

/**
 * `--plugin module.js` and `--import-schema module.js` (VLink's `--plugin` / `--import_schema`), for record, play,
 * clone and merge.
 *
 * A plugin module's default export is a `BagPluginInterface` instance, a subclass of it, or a factory
 * `(api) => BagPluginInterface` that receives the `@vlink/bag` module (so a plugin file needs no installed
 * dependency: `export default ({ BagPluginInterface }) => new (class extends BagPluginInterface { … })()`).
 * Bound to the writer (record, clone, merge: `onWrite`, url remap/drop) or to the reader (play: `onRead`).
 *
 * A schema module's default export is an array of `SchemaData` (pushed at the start) or a provider
 * `(serType, schemaType) => SchemaData | undefined` asked for every schema the recording lacks (VLink's
 * `SchemaCallback`).
 */
export interface PluginFlags {
  plugin?: string;
  importSchema?: string;
}

export function addPluginOptions(command: Command, side: 'read' | 'write'): Command {
  command.addOption(
    new Option(
      '--plugin <module>',
      side === 'write'
        ? 'bind a bag plugin (BagPluginInterface: onWrite, url remap/drop) to the writer'
        : 'bind a bag plugin (BagPluginInterface: onRead, url remap/drop) to the player',
    ),
  );
  if (side === 'write')
    command.addOption(
      new Option('--import-schema <module>', 'schemas to embed: an array of SchemaData or a provider(serType, type)'),
    );
  return command;
}

async function importModule(path: string, flag: string): Promise<unknown> {
  try {
    const module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
    if (module.default === undefined) throw new Error('the module has no default export');
    return module.default;
  } catch (error) {
    throw new CliError(`${flag}: cannot load: ${(error as Error).message}`, path, undefined, { cause: error });
  }
}

/** Whether `value` is an object whose named fields (its own or inherited) are of these `typeof` kinds. */
function hasFieldsOf(value: unknown, kinds: Record<string, 'function' | 'string' | 'number'>): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return Object.entries(kinds).every(([name, kind]) => typeof fields[name] === kind);
}

function isPlugin(value: unknown): value is BagPluginInterface {
  return hasFieldsOf(value, {
    attach: 'function',
    convertUrlMeta: 'function',
    onWrite: 'function',
    onRead: 'function',
  });
}

/** Loads `--plugin`; undefined without the flag. */
export async function loadPlugin(path: string | undefined): Promise<BagPluginInterface | undefined> {
  if (path === undefined) return undefined;
  const exported = await importModule(path, '--plugin');
  let plugin: unknown = exported;
  if (typeof exported === 'function') {
    const fn = exported as (api: typeof bag) => unknown;
    plugin = fn.prototype instanceof bag.BagPluginInterface ? new (exported as new () => unknown)() : fn(bag);
  }
  if (!isPlugin(plugin))
    throw new CliError(
      '--plugin: the default export is not a BagPluginInterface (nor a class or factory of one)',
      path,
    );
  return plugin;
}

export interface SchemaImport {
  schemas: SchemaData[];
  provider: SchemaCallback | undefined;
}

/** Loads `--import-schema`; undefined without the flag. */
export async function loadSchemas(path: string | undefined): Promise<SchemaImport | undefined> {
  if (path === undefined) return undefined;
  const exported = await importModule(path, '--import-schema');
  if (typeof exported === 'function') return { schemas: [], provider: exported as SchemaCallback };
  if (!Array.isArray(exported) || !exported.every(isSchema))
    throw new CliError(
      '--import-schema: the default export must be an array of {name, encoding, schemaType, data: Uint8Array} or a function',
      path,
    );
  return { schemas: exported, provider: undefined };
}

function isSchema(value: unknown): value is SchemaData {
  return (
    hasFieldsOf(value, { name: 'string', encoding: 'string', schemaType: 'number' }) &&
    (value as SchemaData).data instanceof Uint8Array
  );
}

/** Binds what `--plugin`/`--import-schema` loaded to a writer. */
export function applyToWriter(
  writer: bag.BagWriter,
  plugin: BagPluginInterface | undefined,
  schemas: SchemaImport | undefined,
): void {
  if (plugin) writer.bindPluginInterface(plugin);
  if (schemas?.provider) writer.registerSchemaCallback(schemas.provider);
  for (const schema of schemas?.schemas ?? []) writer.pushSchema(schema);
}
