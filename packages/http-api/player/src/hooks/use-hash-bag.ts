import { useEffect, useState } from 'preact/hooks';
import { setToken } from '../api.js';

function hashParams(): URLSearchParams {
  return new URLSearchParams(location.hash.slice(1));
}

/** `#token=…` is taken once into sessionStorage and removed from the address bar; `#bag=<id>` names the open bag. */
function initialBag(): string | undefined {
  const params = hashParams();
  const t = params.get('token');
  if (t) {
    setToken(t);
    params.delete('token');
    history.replaceState(null, '', params.size > 0 ? `#${params.toString()}` : location.pathname);
  }
  return params.get('bag') ?? undefined;
}

/**
 * The open bag, named in the address bar (`#bag=<id>`) so a link or a reload opens it again. A link followed inside
 * the page (`#bag=…`, `#token=…`) opens that bag; a token in it calls `tokenChanged`.
 */
export function useHashBag(tokenChanged: () => void): [string | undefined, (id: string) => void] {
  const [bagId, setBagId] = useState<string | undefined>(initialBag);
  useEffect(() => {
    const onHash = () => {
      const hadToken = hashParams().has('token');
      const id = initialBag();
      if (hadToken) tokenChanged();
      if (id) setBagId(id);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  const open = (id: string) => {
    if (id === bagId) return;
    history.replaceState(null, '', `#bag=${encodeURIComponent(id)}`);
    setBagId(id);
  };
  return [bagId, open];
}
