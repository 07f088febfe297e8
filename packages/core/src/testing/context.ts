import type { RecordingContext } from '../backend/backend.js';
import type { SchemaData } from '../model/frame.js';
import { schemaTypeLabel, type SchemaType } from '../model/schema-type.js';
import { FORMAT_VERSION } from '../model/version.js';

/** A RecordingContext for backend unit tests, with an in-memory schema table. */
export function createTestContext(
  overrides: Partial<Omit<RecordingContext, 'resolveSchema'>> & { schemas?: SchemaData[] } = {},
): RecordingContext {
  const schemas = new Map<string, SchemaData>();
  for (const s of overrides.schemas ?? []) schemas.set(`${s.name}\x1f${schemaTypeLabel(s.schemaType)}`, s);
  return {
    startTimestamp: overrides.startTimestamp ?? 1_773_712_800_123,
    timezone: overrides.timezone ?? 480,
    processName: overrides.processName ?? 'vlink-test',
    tagName: overrides.tagName ?? 'Empty',
    version: overrides.version ?? FORMAT_VERSION,
    resolveSchema: (name: string, type: SchemaType) => schemas.get(`${name}\x1f${schemaTypeLabel(type)}`),
    ...(overrides.onSplit ? { onSplit: overrides.onSplit } : {}),
  };
}
