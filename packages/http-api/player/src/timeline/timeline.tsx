import { useEffect, useRef } from 'preact/hooks';
import { TimelineView, type TimelineCallbacks, type TimelineData } from './timeline-view.js';

export interface TimelineProps {
  data: TimelineData;
  position: () => number;
  callbacks: TimelineCallbacks;
  /** Receives the view once created (zoom buttons and keyboard shortcuts drive it). */
  onReady?: (view: TimelineView | undefined) => void;
}

/** Preact shell around the canvas TimelineView: the view lives as long as the component, data flows in by props. */
export function Timeline({ data, position, callbacks, onReady }: TimelineProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<TimelineView | undefined>(undefined);
  const latest = useRef({ position, callbacks });
  latest.current = { position, callbacks };

  useEffect(() => {
    const v = new TimelineView(
      host.current!,
      {
        seek: (ms) => latest.current.callbacks.seek(ms),
        select: (url) => latest.current.callbacks.select(url),
        view: (b, e, px) => latest.current.callbacks.view(b, e, px),
      },
      () => latest.current.position(),
    );
    view.current = v;
    onReady?.(v);
    return () => {
      onReady?.(undefined);
      v.destroy();
      view.current = undefined;
    };
  }, []);

  useEffect(() => view.current?.setData(data), [data]);

  return <div ref={host} data-testid="timeline" />;
}
