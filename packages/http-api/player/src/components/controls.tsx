import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ReplayState } from '../replay-client.js';
import { formatTime, parseTime, tzLabel, type Clock, type TimeMode } from '../time-format.js';

export const RATES = [0.1, 0.25, 0.5, 1, 2, 4, 10, 0];

export interface ControlsProps {
  state: ReplayState;
  position: () => number;
  clock: Clock;
  durationMs: number;
  rate: number;
  loop: boolean;
  skipBlank: boolean;
  canPlay: boolean;
  dropped: number;
  error: string | undefined;
  onPlayPause(): void;
  onStep(): void;
  onStop(): void;
  onSeek(ms: number): void;
  onRate(rate: number): void;
  onLoop(loop: boolean): void;
  onSkipBlank(skip: boolean): void;
  onTimeMode(mode: TimeMode): void;
  onZoom(how: 'in' | 'out' | 'fit'): void;
}

/** Re-renders every `ms` while `active`, for a clock that moves without events. */
function useTicker(active: boolean, ms: number): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setTick((t) => t + 1), ms);
    return () => clearInterval(timer);
  }, [active, ms]);
}

/** A labelled checkbox of the control bar. */
function Toggle(p: {
  title: string;
  testId: string;
  checked: boolean;
  onChange(checked: boolean): void;
  children: ComponentChildren;
}) {
  return (
    <label title={p.title}>
      <input
        type="checkbox"
        data-testid={p.testId}
        checked={p.checked}
        onChange={(e) => p.onChange(e.currentTarget.checked)}
      />{' '}
      {p.children}
    </label>
  );
}

export function Controls(p: ControlsProps) {
  const playing = p.state === 'playing';
  useTicker(playing, 100);
  const [editing, setEditing] = useState<string | undefined>();
  const [bad, setBad] = useState(false);
  const now = formatTime(p.clock, p.position());
  const submit = () => {
    const ms = editing === undefined ? undefined : parseTime(p.clock, editing);
    if (ms === undefined || !Number.isFinite(ms)) return setBad(true);
    setBad(false);
    setEditing(undefined);
    p.onSeek(Math.max(0, Math.min(p.durationMs, ms)));
  };
  const ready = p.state !== 'connecting' && p.state !== 'closed';
  return (
    <section class="controls" aria-label="Replay controls">
      <button
        type="button"
        class="primary"
        data-testid="play"
        onClick={p.onPlayPause}
        disabled={!ready || (!p.canPlay && !playing)}
        title="Play / pause (Space)"
      >
        {playing ? '❚❚ Pause' : p.state === 'paused' ? '▶ Resume' : '▶ Play'}
      </button>
      <button
        type="button"
        data-testid="step"
        onClick={p.onStep}
        disabled={!ready || playing || !p.canPlay}
        title="One frame (. or →)"
      >
        Step ›
      </button>
      <button
        type="button"
        data-testid="stop"
        onClick={p.onStop}
        disabled={!ready || p.state === 'stopped'}
        title="Stop"
      >
        ■
      </button>
      <form
        class="time-field"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <input
          data-testid="time"
          class={`mono${bad ? ' invalid' : ''}`}
          aria-label="Replay time; type a time and press Enter to seek"
          title={
            p.clock.mode === 'relative'
              ? 'Seek: [h:]m:ss.mmm or seconds, then Enter'
              : 'Seek: hh:mm:ss.mmm or YYYY-MM-DD hh:mm:ss.mmm, then Enter'
          }
          value={editing ?? now}
          size={p.clock.mode === 'relative' ? 12 : 24}
          onFocus={() => setEditing(now)}
          onInput={(e) => setEditing(e.currentTarget.value)}
          onBlur={() => {
            setEditing(undefined);
            setBad(false);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape') e.currentTarget.blur();
          }}
        />
        <span class="muted"> / {formatTime({ ...p.clock, mode: 'relative' }, p.durationMs)}</span>
      </form>
      <label title="Replay speed; max = as fast as the page reads">
        Rate{' '}
        <select data-testid="rate" value={String(p.rate)} onChange={(e) => p.onRate(Number(e.currentTarget.value))}>
          {RATES.map((r) => (
            <option key={r} value={String(r)}>
              {r === 0 ? 'max' : `${r}×`}
            </option>
          ))}
        </select>
      </label>
      <Toggle title="Start again at the end (L)" testId="loop" checked={p.loop} onChange={p.onLoop}>
        Loop
      </Toggle>
      <Toggle
        title="Start at the first message instead of at the recording start"
        testId="skip-blank"
        checked={p.skipBlank}
        onChange={p.onSkipBlank}
      >
        Skip blank
      </Toggle>
      <label title="How times are shown; local is the recording's own zone">
        Time{' '}
        <select
          data-testid="time-mode"
          value={p.clock.mode}
          onChange={(e) => p.onTimeMode(e.currentTarget.value as TimeMode)}
        >
          <option value="relative">relative</option>
          <option value="local">local ({tzLabel(p.clock.timezone)})</option>
          <option value="utc">UTC</option>
        </select>
      </label>
      <span class="zoom">
        <button type="button" class="small" onClick={() => p.onZoom('in')} title="Zoom in (+)">
          +
        </button>
        <button type="button" class="small" onClick={() => p.onZoom('out')} title="Zoom out (-)">
          −
        </button>
        <button type="button" class="small" onClick={() => p.onZoom('fit')} title="Whole recording (0)">
          fit
        </button>
      </span>
      <span class={`state state-${p.state}`} data-testid="state">
        {p.state}
      </span>
      {p.dropped > 0 ? (
        <span class="badge warn" title="Frames the server skipped because the page read too slowly">
          {p.dropped} dropped
        </span>
      ) : null}
      {p.error ? (
        <span class="error small" data-testid="replay-error">
          {p.error}
        </span>
      ) : null}
    </section>
  );
}
