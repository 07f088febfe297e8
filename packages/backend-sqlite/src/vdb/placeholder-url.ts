/**
 * The url under which rows are kept whose url id no readable `VLinkUrls` row names. Their payloads are intact; only
 * the name is lost, and dropping them would lose data a reader could still use (the report names the placeholder). A tryToFix read names them so too
 * when their `VLinkUrls` row holds a number or nothing where the url belongs (facts.ts).
 */
export function placeholderUrl(id: number): string {
  return `/vlink-bag/unnamed-url-${id}`;
}
