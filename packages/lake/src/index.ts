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
  type BagExportReport,
  type ExportOptions,
  type ExportReport,
  exportMessages,
  type UrlExportReport,
} from './export/export-messages.js';
