import { actionText, type ActionType } from '@vlink/bag-core';

/** Stored action text by `ActionType` value (§10.2), for the hot path. */
export const ACTION_TEXT: readonly string[] = Array.from({ length: 9 }, (_, i) => actionText(i as ActionType));

// What a url is for the recording (its ser, its family, its schemas' key) is core's url-identity.ts, shared by every
// writer; this file keeps only the `.vdb` hot path's table.
