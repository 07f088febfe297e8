export {
  BAG_COLUMNS,
  CATALOG_BAGS_FILE,
  CATALOG_URLS_FILE,
  EXPORT_MESSAGES_DIR,
  GAP_FACTOR,
  type LakeColumn,
  MESSAGE_COLUMNS,
  URL_COLUMNS,
} from './layout.js';
export {
  LAKE_TEXT_FORMATS,
  type LakeTextFormat,
  formatResult,
  rowObjects,
  toCsv,
  toJsonArray,
  toNdjson,
  toTable,
} from './query/format.js';
export {
  Lake,
  type LakeColumnInfo,
  type LakeQueryOptions,
  type LakeResult,
  type OpenLakeOptions,
  openLake,
  queryLake,
} from './query/lake.js';
export { isoFromMicros, type LakeValue } from './query/values.js';
export { LAKE_VIEWS, type LakeViewName } from './query/views.js';
export {
  type IndexEvent,
  type IndexFailure,
  type IndexOptions,
  type IndexReport,
  indexBags,
} from './catalog/index-bags.js';
export type { BagRow, UrlRow } from './catalog/describe-bag.js';
export {
  type BagExportReport,
  type ExportOptions,
  type ExportReport,
  exportMessages,
  type UrlExportReport,
} from './export/export-messages.js';
