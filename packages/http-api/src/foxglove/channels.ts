import type { Channel } from '@foxglove/ws-protocol';
import { foxgloveChannels } from '@vlink/bag-decode';
import type { Info, SchemaData } from '@vlink/bag';

/**
 * The Foxglove channels of a bag, numbered from 1 in `Info.urls` order: `@vlink/bag-decode`'s mapping, the one
 * `vlink-bag play --serve` advertises too (well-known encodings, binary schemas base64, text schemas as text).
 */
export function channelsFor(info: Info, schemas: readonly SchemaData[]): Channel[] {
  return foxgloveChannels(info.urls, schemas).map((channel, i) => ({ id: i + 1, ...channel }));
}
