import type { z } from '@hono/zod-openapi';
import type { Info as CoreInfo, UrlMeta as CoreUrlMeta, BagReport, UrlTiming } from '@vlink/bag';
import type { Density as ComputedDensity } from '../density/density.js';
import type { DensitySchema } from '../density/density-route.js';
import type { ReportSchema } from './report-schemas.js';
import type { BagSummarySchema, InfoSchema, SchemaListSchema, TimingSchema, UrlMetaSchema } from './schemas.js';

/**
 * The JSON answers as their clients see them, inferred from the route schemas that the OpenAPI document is built
 * from: one declaration per shape. The web player imports these (types only, nothing of the server is bundled).
 */
export type BagSummary = z.infer<typeof BagSummarySchema>;
export type UrlMeta = z.infer<typeof UrlMetaSchema>;
export type Info = z.infer<typeof InfoSchema>;
export type SchemaJson = z.infer<typeof SchemaListSchema>['schemas'][number];
export type Timing = z.infer<typeof TimingSchema>;
export type Gap = Timing['urls'][number]['gaps'][number];
export type Report = z.infer<typeof ReportSchema>;
export type Histogram = NonNullable<Report['streams'][number]['intervalHistogram']>;
export type Density = z.infer<typeof DensitySchema>;

/**
 * The schemas declare every field of what the server serialises (core's types and the density answer): a field added
 * there and not to its schema fails this build instead of being invisible to clients. `api-contract.test.ts` checks
 * the other direction on real answers (nothing undeclared, every required field present).
 */
type Undeclared<Served, Declared> = Exclude<keyof Served, keyof Declared>;
type None<Keys extends never> = Keys;
export type DeclaresEveryField = [
  None<Undeclared<CoreInfo, Info>>,
  None<Undeclared<CoreUrlMeta, UrlMeta>>,
  None<Undeclared<UrlTiming, Timing['urls'][number]>>,
  None<Undeclared<BagReport, Report>>,
  None<Undeclared<BagReport['streams'][number], Report['streams'][number]>>,
  None<Undeclared<ComputedDensity, Density>>,
];
