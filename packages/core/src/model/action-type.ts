/** What a message was in the middleware (VLink `ActionType`, format reference §10.2). Integer values are VLink's. */
export enum ActionType {
  Unknown = 0,
  ClientRequest = 1,
  ClientResponse = 2,
  ServerRequest = 3,
  ServerResponse = 4,
  Publish = 5,
  Subscribe = 6,
  Set = 7,
  Get = 8,
}

/** The url kind stored in `VLinkUrls.type`. */
export type UrlKind = 'Method' | 'Event' | 'Field' | 'Unknown';

const TEXT = ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'] as const;
export type ActionText = (typeof TEXT)[number];
const FROM_TEXT = new Map<string, ActionType>(TEXT.map((t, i) => [t, i as ActionType]));

/** Stored text of an action (`convert_action`). */
export function actionText(action: ActionType): ActionText {
  return TEXT[action] ?? 'Unknown';
}

/** Exact, case-sensitive match; anything else is `Unknown`, as VLink's readers do. */
export function parseAction(text: string | null | undefined): ActionType {
  return (text && FROM_TEXT.get(text)) || ActionType.Unknown;
}

export function urlKindOf(action: ActionType): UrlKind {
  if (action >= ActionType.ClientRequest && action <= ActionType.ServerResponse) return 'Method';
  if (action === ActionType.Publish || action === ActionType.Subscribe) return 'Event';
  if (action === ActionType.Set || action === ActionType.Get) return 'Field';
  return 'Unknown';
}

export function isRpcAction(action: ActionType): boolean {
  return urlKindOf(action) === 'Method';
}

/** Pub/Sub/Set/Get: the actions whose timestamps feed a url's frequency (format reference §2.4). */
export function countsForFrequency(action: ActionType): boolean {
  return action >= ActionType.Publish && action <= ActionType.Get;
}

export function isRequestAction(action: ActionType): boolean {
  return action === ActionType.ClientRequest || action === ActionType.ServerRequest;
}

/**
 * RPC urls carry `"Req|Resp"` as their ser; a request uses the left half, a response the right (format reference §2.6).
 * Other actions use the whole string.
 */
export function serForAction(ser: string, action: ActionType): string {
  if (!isRpcAction(action)) return ser;
  const bar = ser.indexOf('|');
  if (bar < 0) return ser;
  return isRequestAction(action) ? ser.slice(0, bar) : ser.slice(bar + 1);
}
