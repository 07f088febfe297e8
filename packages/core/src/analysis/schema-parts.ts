/** Pieces the JSON Schemas of the report and of the summary share. */
export const num = { type: 'number' };
export const str = { type: 'string' };

/** Nearest-rank percentiles (µs) of `what`, or null `nullWhen`. */
export const spread = (what: string, nullWhen = 'when there are none') => ({
  description: `nearest-rank percentiles of ${what}, µs; null ${nullWhen}`,
  oneOf: [
    {
      type: 'object',
      required: ['min', 'p50', 'p99', 'max'],
      additionalProperties: false,
      properties: { min: num, p50: num, p99: num, max: num },
    },
    { type: 'null' },
  ],
});
