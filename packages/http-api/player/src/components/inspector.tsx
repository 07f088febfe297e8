import { useEffect, useRef, useState } from 'preact/hooks';
import type { DecodedFrame } from '../../../../decode/src/binary-frame.js';
import { hexDump, serForAction, type Decoded, type InspectorDecoder } from '../decode.js';
import { formatBytes, formatTime, type Clock } from '../time-format.js';
import { SCHEMA_LABELS } from './url-table.js';

const ACTIONS = ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'];
/** While frames stream in, the view follows at this pace: decoding every frame of a 1 kHz url helps nobody. */
const REFRESH_MS = 100;
const MAX_TEXT = 200_000;

export interface InspectorProps {
  urls: string[];
  url: string | undefined;
  frame: DecodedFrame | undefined;
  received: number;
  decoder: InspectorDecoder | undefined;
  clock: Clock;
  onUrl(url: string): void;
}

/** The latest replayed frame of one url, decoded (protobuf, JSON, text) or as hex. */
export function Inspector({ urls, url, frame, received, decoder, clock, onUrl }: InspectorProps) {
  const [shown, setShown] = useState<DecodedFrame | undefined>(frame);
  const [decoded, setDecoded] = useState<Decoded | undefined>();
  const [hex, setHex] = useState(false);

  // Follow the latest frame, at most every REFRESH_MS (the delay shrinks as frames keep coming, so it does fire).
  const shownAt = useRef(0);
  useEffect(() => {
    if (frame === shown) return;
    const urlChanged = !shown || !frame || shown.url !== frame.url;
    const wait = urlChanged ? 0 : Math.max(0, REFRESH_MS - (performance.now() - shownAt.current));
    const timer = setTimeout(() => {
      shownAt.current = performance.now();
      setShown(frame);
    }, wait);
    return () => clearTimeout(timer);
  }, [frame, shown]);

  useEffect(() => {
    let live = true;
    if (!shown || !decoder) setDecoded(undefined);
    else
      decoder.decode(shown).then(
        (d) => live && setDecoded(d),
        (e: Error) => live && setDecoded({ kind: 'hex', reason: e.message }),
      );
    return () => {
      live = false;
    };
  }, [shown, decoder]);

  const body = (() => {
    if (!shown) return <p class="muted">No frame of this url yet: press play or step.</p>;
    if (!decoded) return <p class="muted">Decoding…</p>;
    if (hex || decoded.kind === 'hex') {
      const limit = 4096;
      return (
        <>
          {decoded.kind === 'hex' && decoded.reason ? <p class="muted">{decoded.reason}</p> : null}
          <pre class="payload hex" data-testid="payload">
            {shown.data.length === 0 ? '(empty payload)' : hexDump(shown.data, limit)}
          </pre>
          {shown.data.length > limit ? (
            <p class="muted">
              First {formatBytes(limit)} of {formatBytes(shown.data.length)}.
            </p>
          ) : null}
        </>
      );
    }
    const text = decoded.kind === 'text' ? decoded.value : JSON.stringify(decoded.value, null, 2);
    return (
      <pre class="payload" data-testid="payload">
        {text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n…` : text}
      </pre>
    );
  })();

  return (
    <section class="panel inspector" aria-label="Message inspector">
      <div class="panel-head">
        <h2>Inspector</h2>
        <select
          data-testid="inspector-url"
          value={url ?? ''}
          onChange={(e) => onUrl(e.currentTarget.value)}
          aria-label="Url to inspect"
        >
          {urls.map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>
        <label title="Show the raw bytes whatever the encoding">
          <input type="checkbox" checked={hex} onChange={(e) => setHex(e.currentTarget.checked)} /> hex
        </label>
      </div>
      {shown ? (
        <dl class="frame-meta" data-testid="frame-meta">
          <dt>time</dt>
          <dd class="mono" data-testid="frame-time">
            {formatTime(clock, shown.timestamp / 1000)}
          </dd>
          <dt>action</dt>
          <dd>{ACTIONS[shown.actionType] ?? shown.actionType}</dd>
          <dt>ser</dt>
          <dd class="mono">
            {serForAction(shown.serType, shown.actionType)}{' '}
            <span class="muted">({SCHEMA_LABELS[shown.schemaType] ?? shown.schemaType})</span>
          </dd>
          <dt>size</dt>
          <dd>{formatBytes(shown.data.length)}</dd>
          <dt>decoded</dt>
          <dd data-testid="decoded-kind">{hex ? 'hex' : (decoded?.kind ?? '…')}</dd>
        </dl>
      ) : null}
      <div class="scroll">{body}</div>
      <p class="muted small" data-testid="received">
        {received.toLocaleString('en-US')} frames received
      </p>
    </section>
  );
}
