import { useEffect, useState } from 'preact/hooks';
import { bagPath, getJson, type Info, type SchemaJson } from '../api.js';
import { InspectorDecoder } from '../decode.js';
import { ReplayClient, type ReplaySnapshot } from '../replay-client.js';
import { isAbort, type ApiAccess } from './use-api-access.js';

export interface OpenBag {
  info: Info | undefined;
  infoError: string | undefined;
  /** The inspector's decoder: the bag's schemas, or none when they could not be read. */
  decoder: InspectorDecoder | undefined;
  /** The replay socket's client, once the info (which gives the duration) is in. */
  client: ReplayClient | undefined;
  snap: ReplaySnapshot | undefined;
}

/** The open bag: info first (the replay needs its duration), then the replay; the schemas in parallel. */
export function useOpenBag(bagId: string | undefined, access: ApiAccess): OpenBag {
  const [info, setInfo] = useState<Info>();
  const [infoError, setInfoError] = useState<string>();
  const [decoder, setDecoder] = useState<InspectorDecoder>();
  const [client, setClient] = useState<ReplayClient>();
  const [snap, setSnap] = useState<ReplaySnapshot>();
  const { auth, onApiError } = access;

  useEffect(() => {
    setInfo(undefined);
    setInfoError(undefined);
    setDecoder(undefined);
    setSnap(undefined);
    if (!bagId) return;
    const abort = new AbortController();
    let replay: ReplayClient | undefined;
    const base = bagPath(bagId);
    const infoRequest = getJson<Info>(`${base}/info`, abort.signal);
    infoRequest.then(
      (i) => {
        if (abort.signal.aborted) return;
        setInfo(i);
        replay = new ReplayClient(bagId, i.totalDuration);
        setClient(replay);
        setSnap(replay.current);
        replay.subscribe(setSnap);
      },
      (e) => onApiError(e, setInfoError),
    );
    // The decoder needs the urls' declared encodings (foreign bags) as well as the schemas.
    Promise.all([
      getJson<{ schemas: SchemaJson[] }>(`${base}/schemas`, abort.signal),
      infoRequest.catch(() => undefined),
    ]).then(
      ([r, i]) => setDecoder(new InspectorDecoder(r.schemas, i?.urls ?? [])),
      (e) => {
        if (!isAbort(e)) setDecoder(new InspectorDecoder([]));
      },
    );
    return () => {
      abort.abort();
      replay?.close();
      setClient(undefined);
    };
  }, [bagId, auth]);

  return { info, infoError, decoder, client, snap };
}
