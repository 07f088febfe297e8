import { useCallback, useState } from 'preact/hooks';
import { ApiError, setToken } from '../api.js';

/** An API error as the page shows it: the server's code and message. */
export const errorText = (error: unknown) =>
  error instanceof ApiError ? `${error.code}: ${error.message}` : (error as Error).message;
export const isAbort = (error: unknown) => (error as Error)?.name === 'AbortError';

export interface ApiAccess {
  /** The server answered 401: the page asks for a token. */
  needToken: boolean;
  /** Bumped when the token changes: every request depending on it runs again. */
  auth: number;
  /** A request was answered: no token is missing. */
  authorized(): void;
  /** Uses a new token (typed in the page or given by `#token=`). */
  changeToken(value?: string): void;
  /** Shows a failed request's error through `set`; a 401 also asks for a token, an aborted request shows nothing. */
  onApiError(error: unknown, set: (text: string) => void): void;
}

/** Who the page is to the server: the token it sends and whether the server asked for one. */
export function useApiAccess(): ApiAccess {
  const [needToken, setNeedToken] = useState(false);
  const [auth, setAuth] = useState(0);
  const onApiError = useCallback((error: unknown, set: (text: string) => void) => {
    if (isAbort(error)) return;
    if (error instanceof ApiError && error.status === 401) setNeedToken(true);
    set(errorText(error));
  }, []);
  return {
    needToken,
    auth,
    authorized: () => setNeedToken(false),
    changeToken(value) {
      if (value !== undefined) setToken(value);
      setNeedToken(false);
      setAuth((n) => n + 1);
    },
    onApiError,
  };
}
