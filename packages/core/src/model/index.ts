/**
 * `@vlink/bag-core/model`: the frame model alone (the enums, their text forms, the frame and info types), with no
 * `node:*` import and no backend, for code that runs in a browser: `@vlink/bag-decode` and the web player import it
 * instead of keeping copies of the values.
 */
export {
  ActionType,
  actionText,
  parseAction,
  serForAction,
  urlKindOf,
  type ActionText,
  type UrlKind,
} from './action-type.js';
export {
  SchemaType,
  familyMessageEncoding,
  isValidSchemaType,
  parseSchemaType,
  schemaTypeLabel,
} from './schema-type.js';
export type { Frame, SchemaData } from './frame.js';
export type { AttachmentMeta, Info, InfoMetadata, UrlMeta } from './info.js';
