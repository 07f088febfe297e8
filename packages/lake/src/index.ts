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
  type IndexEvent,
  type IndexFailure,
  type IndexOptions,
  type IndexReport,
  indexBags,
} from './catalog/index-bags.js';
export type { BagRow, UrlRow } from './catalog/describe-bag.js';
