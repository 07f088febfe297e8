import { useEffect, useState } from 'preact/hooks';
import { bagPath, getJson } from '../api.js';
import type { ApiAccess } from './use-api-access.js';

/**
 * One JSON answer about the open bag (`/v1/bags/<id>/<path>`, e.g. `timing?factor=1.5`, `report`): fetched again when
 * the bag, the path or the token changes; the request of a bag left is aborted (which stops its pass on the server).
 */
export function useBagJson<T>(
  bagId: string | undefined,
  path: string,
  access: ApiAccess,
): { data: T | undefined; error: string | undefined } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const { auth, onApiError } = access;
  useEffect(() => {
    setData(undefined);
    setError(undefined);
    if (!bagId) return;
    const abort = new AbortController();
    getJson<T>(`${bagPath(bagId)}/${path}`, abort.signal).then(setData, (e) => onApiError(e, setError));
    return () => abort.abort();
  }, [bagId, path, auth]);
  return { data, error };
}
