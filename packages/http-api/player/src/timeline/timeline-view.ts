import type { Density, Gap } from '../api.js';
import { formatTick, formatTime, tickStep, type Clock } from '../time-format.js';

export interface TimelineData {
  durationMs: number;
  /** One lane per url, top to bottom. */
  lanes: string[];
  /** The whole recording, coarse; always there once loaded. */
  overview?: Density | undefined;
  /** The visible window at about one bucket per pixel; used when it covers the view. */
  detail?: Density | undefined;
  gaps: ReadonlyMap<string, Gap[]>;
  /** Urls the url filter leaves out of the replay (drawn grey). */
  excluded: ReadonlySet<string>;
  selected?: string | undefined;
  /** Where the replay window starts (the blank start is shaded when "skip blank" is on). */
  rangeBeginMs: number;
  clock: Clock;
}

export interface TimelineCallbacks {
  seek(ms: number): void;
  select(url: string): void;
  /** The visible window changed (zoom, pan, resize): `px` is the plot width, for the detail density. */
  view(beginMs: number, endMs: number, px: number): void;
}

export const LABEL_WIDTH = 210;
const AXIS_HEIGHT = 26;
const LANE_HEIGHT = 22;
const PAD_BOTTOM = 6;
const DRAG_THRESHOLD_PX = 4;
const MIN_SPAN_MS = 0.05;
const COLORS = ['#2563eb', '#0d9488', '#9333ea', '#ca8a04', '#db2777', '#0891b2', '#65a30d', '#ea580c', '#4f46e5', '#059669'];
const GAP_FILL = 'rgba(220, 38, 38, 0.22)';
const GAP_EDGE = '#dc2626';

/**
 * The timeline on two stacked canvases: the base (lanes, densities, gaps, axis) is redrawn only when the data or
 * the view changes; the overlay (replay cursor, hover line) every animation frame, from `position()`.
 *
 * Mouse: wheel zooms around the pointer (shift+wheel or a horizontal wheel pans), drag pans, a click seeks, a click
 * on a lane's label selects its url, double-click fits the whole recording.
 */
export class TimelineView {
  private readonly base: HTMLCanvasElement;
  private readonly overlay: HTMLCanvasElement;
  private readonly resizeObserver: ResizeObserver;
  private data: TimelineData | undefined;
  private width = 0;
  private height = 0;
  private v0 = 0;
  private v1 = 1;
  private hoverX: number | undefined;
  private drag: { x: number; v0: number; v1: number; moved: boolean; id: number } | undefined;
  private raf = 0;
  private baseDirty = true;
  private lastCursorX = NaN;
  private lastHover = -1;
  private lastCursorMs = NaN;

  constructor(
    private readonly container: HTMLElement,
    private readonly callbacks: TimelineCallbacks,
    private readonly position: () => number,
  ) {
    container.classList.add('timeline');
    this.base = document.createElement('canvas');
    this.overlay = document.createElement('canvas');
    this.overlay.className = 'overlay';
    this.overlay.setAttribute('aria-label', 'Timeline: click to seek, wheel to zoom, drag to pan');
    this.overlay.tabIndex = -1;
    container.append(this.base, this.overlay);
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(container);
    this.overlay.addEventListener('pointerdown', this.onPointerDown);
    this.overlay.addEventListener('pointermove', this.onPointerMove);
    this.overlay.addEventListener('pointerup', this.onPointerUp);
    this.overlay.addEventListener('pointerleave', () => {
      this.hoverX = undefined;
    });
    this.overlay.addEventListener('wheel', this.onWheel, { passive: false });
    this.overlay.addEventListener('dblclick', () => this.fit());
    this.resize();
    const tick = () => {
      this.frame();
      this.raf = requestAnimationFrame(tick);
    };
    this.raf = requestAnimationFrame(tick);
  }

  setData(data: TimelineData): void {
    const durationChanged = !this.data || this.data.durationMs !== data.durationMs;
    this.data = data;
    if (durationChanged) {
      this.v0 = 0;
      this.v1 = Math.max(data.durationMs, MIN_SPAN_MS);
      this.emitView();
    }
    this.resizeHeight();
    this.baseDirty = true;
  }

  get view(): { beginMs: number; endMs: number } {
    return { beginMs: this.v0, endMs: this.v1 };
  }

  get plotWidth(): number {
    return Math.max(1, this.width - LABEL_WIDTH);
  }

  /** Zooms by `factor` (< 1 zooms in) around `centerMs` (default: the middle of the view). */
  zoom(factor: number, centerMs = (this.v0 + this.v1) / 2): void {
    const duration = this.duration();
    const span = Math.min(duration, Math.max(MIN_SPAN_MS, (this.v1 - this.v0) * factor));
    const ratio = (centerMs - this.v0) / (this.v1 - this.v0 || 1);
    this.setView(centerMs - ratio * span, centerMs - ratio * span + span);
  }

  /** Shows [beginMs, endMs] (clamped to the recording). */
  setView(beginMs: number, endMs: number): void {
    const duration = this.duration();
    let span = Math.min(duration, Math.max(MIN_SPAN_MS, endMs - beginMs));
    let v0 = Math.max(0, Math.min(beginMs, duration - span));
    if (!Number.isFinite(v0)) v0 = 0;
    if (!Number.isFinite(span)) span = duration;
    if (v0 === this.v0 && v0 + span === this.v1) return;
    this.v0 = v0;
    this.v1 = v0 + span;
    this.baseDirty = true;
    this.emitView();
  }

  fit(): void {
    this.setView(0, this.duration());
  }

  destroy(): void {
    cancelAnimationFrame(this.raf);
    this.resizeObserver.disconnect();
    this.base.remove();
    this.overlay.remove();
  }

  private duration(): number {
    return Math.max(this.data?.durationMs ?? 0, MIN_SPAN_MS);
  }

  private emitView(): void {
    this.callbacks.view(this.v0, this.v1, this.plotWidth);
  }

  private xOf(ms: number): number {
    return LABEL_WIDTH + ((ms - this.v0) / (this.v1 - this.v0)) * this.plotWidth;
  }

  private msAt(x: number): number {
    return this.v0 + ((x - LABEL_WIDTH) / this.plotWidth) * (this.v1 - this.v0);
  }

  private resize(): void {
    const width = Math.floor(this.container.clientWidth);
    if (width === this.width || width === 0) return;
    this.width = width;
    this.resizeHeight();
    this.baseDirty = true;
    this.emitView();
  }

  private resizeHeight(): void {
    const lanes = Math.max(1, this.data?.lanes.length ?? 1);
    this.height = AXIS_HEIGHT + lanes * LANE_HEIGHT + PAD_BOTTOM;
    const dpr = window.devicePixelRatio || 1;
    for (const canvas of [this.base, this.overlay]) {
      const w = Math.round(this.width * dpr);
      const h = Math.round(this.height * dpr);
      if (canvas.width !== w || canvas.height !== h) {
        canvas.width = w;
        canvas.height = h;
        canvas.style.width = `${this.width}px`;
        canvas.style.height = `${this.height}px`;
      }
    }
    this.container.style.height = `${this.height}px`;
    this.lastCursorX = NaN;
  }

  private context(canvas: HTMLCanvasElement): CanvasRenderingContext2D {
    const ctx = canvas.getContext('2d')!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  private frame(): void {
    if (this.baseDirty) {
      this.baseDirty = false;
      this.drawBase();
      this.lastCursorX = NaN;
    }
    const cursorMs = this.data ? this.position() : NaN;
    this.follow(cursorMs);
    const cursorX = this.data ? Math.round(this.xOf(cursorMs) * 2) / 2 : NaN;
    const hover = this.hoverX ?? -1;
    if (cursorX === this.lastCursorX && hover === this.lastHover) return;
    this.lastCursorX = cursorX;
    this.lastHover = hover;
    this.drawOverlay(cursorX);
  }

  /**
   * Pages the view along when the replay runs off its right edge (it was inside the view a frame ago and moved on by
   * less than a view's width: playback, not a seek elsewhere). Not while the user drags.
   */
  private follow(cursorMs: number): void {
    const last = this.lastCursorMs;
    this.lastCursorMs = cursorMs;
    if (this.drag || !Number.isFinite(cursorMs) || !(last >= this.v0 && last <= this.v1)) return;
    const span = this.v1 - this.v0;
    if (cursorMs > this.v1 && cursorMs - last < span && this.v1 < this.duration()) this.setView(cursorMs - span * 0.05, cursorMs + span * 0.95);
  }

  private drawBase(): void {
    const ctx = this.context(this.base);
    ctx.clearRect(0, 0, this.width, this.height);
    const data = this.data;
    if (!data) return;
    const plotRight = this.width;
    const step = tickStep((this.v1 - this.v0) / this.plotWidth);

    // Axis and grid.
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#f6f7f9';
    ctx.fillRect(0, 0, this.width, AXIS_HEIGHT);
    ctx.strokeStyle = '#d0d5dc';
    ctx.beginPath();
    ctx.moveTo(0, AXIS_HEIGHT - 0.5);
    ctx.lineTo(plotRight, AXIS_HEIGHT - 0.5);
    ctx.stroke();
    const first = Math.ceil(this.v0 / step) * step;
    for (let t = first; t <= this.v1; t += step) {
      const x = Math.round(this.xOf(t)) + 0.5;
      ctx.strokeStyle = '#eceef1';
      ctx.beginPath();
      ctx.moveTo(x, AXIS_HEIGHT);
      ctx.lineTo(x, this.height);
      ctx.stroke();
      ctx.strokeStyle = '#9aa3ad';
      ctx.beginPath();
      ctx.moveTo(x, AXIS_HEIGHT - 6);
      ctx.lineTo(x, AXIS_HEIGHT);
      ctx.stroke();
      ctx.fillStyle = '#4b5563';
      ctx.fillText(formatTick(data.clock, t, step), x + 3, AXIS_HEIGHT / 2 - 2);
    }

    // The blank start left out by "skip blank".
    if (data.rangeBeginMs > this.v0) {
      const x = Math.min(plotRight, this.xOf(data.rangeBeginMs));
      ctx.fillStyle = 'rgba(100, 116, 139, 0.12)';
      ctx.fillRect(LABEL_WIDTH, AXIS_HEIGHT, x - LABEL_WIDTH, this.height - AXIS_HEIGHT);
    }

    const density = this.densityForView(data);
    const byUrl = new Map(density?.urls.map((u) => [u.url, u]) ?? []);
    data.lanes.forEach((url, lane) => {
      const top = AXIS_HEIGHT + lane * LANE_HEIGHT;
      const excluded = data.excluded.has(url);
      const color = excluded ? '#b6bcc4' : COLORS[lane % COLORS.length]!;
      if (url === data.selected) {
        ctx.fillStyle = 'rgba(37, 99, 235, 0.08)';
        ctx.fillRect(0, top, this.width, LANE_HEIGHT);
      }
      ctx.strokeStyle = '#eef0f3';
      ctx.beginPath();
      ctx.moveTo(0, top + LANE_HEIGHT - 0.5);
      ctx.lineTo(plotRight, top + LANE_HEIGHT - 0.5);
      ctx.stroke();

      // Density: one bar per bucket, height ∝ √(count / the url's busiest bucket) so sparse stretches stay visible.
      const d = byUrl.get(url);
      if (density && d && d.max > 0) {
        ctx.fillStyle = color;
        ctx.globalAlpha = excluded ? 0.5 : 0.85;
        const inner = LANE_HEIGHT - 6;
        for (let i = 0; i < d.counts.length; i++) {
          const c = d.counts[i]!;
          if (c === 0) continue;
          const b0 = density.beginMs + i * density.bucketMs;
          const b1 = b0 + density.bucketMs;
          if (b1 < this.v0 || b0 > this.v1) continue;
          const x0 = Math.max(LABEL_WIDTH, this.xOf(b0));
          const x1 = Math.min(plotRight, this.xOf(b1));
          const h = Math.max(2, Math.sqrt(c / d.max) * inner);
          ctx.fillRect(x0, top + LANE_HEIGHT - 3 - h, Math.max(1, x1 - x0), h);
        }
        ctx.globalAlpha = 1;
      }

      // Gaps: in the warning colour over the lane, at least 3 px wide so a short one shows when zoomed out.
      for (const gap of data.gaps.get(url) ?? []) {
        const g0 = gap.startUs / 1000;
        const g1 = (gap.startUs + gap.lengthUs) / 1000;
        if (g1 < this.v0 || g0 > this.v1) continue;
        const x0 = Math.max(LABEL_WIDTH, this.xOf(g0));
        const x1 = Math.max(x0 + 3, Math.min(plotRight, this.xOf(g1)));
        ctx.fillStyle = GAP_FILL;
        ctx.fillRect(x0, top + 1, x1 - x0, LANE_HEIGHT - 2);
        ctx.fillStyle = GAP_EDGE;
        ctx.fillRect(x0, top + 1, x1 - x0, 2);
      }
    });

    // Labels last, over anything that was drawn under the label column.
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, AXIS_HEIGHT, LABEL_WIDTH, this.height - AXIS_HEIGHT);
    ctx.strokeStyle = '#d0d5dc';
    ctx.beginPath();
    ctx.moveTo(LABEL_WIDTH - 0.5, 0);
    ctx.lineTo(LABEL_WIDTH - 0.5, this.height);
    ctx.stroke();
    ctx.font = '12px ui-monospace, SFMono-Regular, Menlo, monospace';
    data.lanes.forEach((url, lane) => {
      const top = AXIS_HEIGHT + lane * LANE_HEIGHT;
      const excluded = data.excluded.has(url);
      if (url === data.selected) {
        ctx.fillStyle = 'rgba(37, 99, 235, 0.12)';
        ctx.fillRect(0, top, LABEL_WIDTH - 1, LANE_HEIGHT);
      }
      ctx.fillStyle = excluded ? '#b6bcc4' : COLORS[lane % COLORS.length]!;
      ctx.fillRect(6, top + 7, 8, 8);
      ctx.fillStyle = excluded ? '#9aa3ad' : '#1f2937';
      ctx.fillText(ellipsize(ctx, url, LABEL_WIDTH - 26), 20, top + LANE_HEIGHT / 2);
      if ((data.gaps.get(url)?.length ?? 0) > 0) {
        ctx.fillStyle = GAP_EDGE;
        ctx.fillRect(LABEL_WIDTH - 6, top + 4, 3, LANE_HEIGHT - 8);
      }
    });
    ctx.fillStyle = '#6b7280';
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillText(density === data.detail && data.detail ? 'detail' : 'overview', 8, AXIS_HEIGHT / 2 - 2);
  }

  /** The detail density when it covers the view (it was fetched for it), else the overview. */
  private densityForView(data: TimelineData): Density | undefined {
    const d = data.detail;
    const tolerance = (this.v1 - this.v0) * 0.01;
    if (d && d.beginMs <= this.v0 + tolerance && d.endMs >= this.v1 - tolerance && d.endMs - d.beginMs <= (this.v1 - this.v0) * 4) return d;
    return data.overview;
  }

  private drawOverlay(cursorX: number): void {
    const ctx = this.context(this.overlay);
    ctx.clearRect(0, 0, this.width, this.height);
    const data = this.data;
    if (!data) return;
    if (this.hoverX !== undefined && this.hoverX > LABEL_WIDTH) {
      ctx.strokeStyle = 'rgba(55, 65, 81, 0.35)';
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(this.hoverX + 0.5, AXIS_HEIGHT);
      ctx.lineTo(this.hoverX + 0.5, this.height);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (Number.isFinite(cursorX) && cursorX >= LABEL_WIDTH && cursorX <= this.width) {
      ctx.strokeStyle = '#1d4ed8';
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(cursorX, AXIS_HEIGHT - 8);
      ctx.lineTo(cursorX, this.height);
      ctx.stroke();
      ctx.lineWidth = 1;
      ctx.fillStyle = '#1d4ed8';
      ctx.beginPath();
      ctx.moveTo(cursorX - 5, AXIS_HEIGHT - 10);
      ctx.lineTo(cursorX + 5, AXIS_HEIGHT - 10);
      ctx.lineTo(cursorX, AXIS_HEIGHT - 3);
      ctx.closePath();
      ctx.fill();
    }
    if (this.hoverX !== undefined && this.hoverX > LABEL_WIDTH) {
      const text = formatTime(data.clock, this.msAt(this.hoverX));
      ctx.font = '11px ui-monospace, monospace';
      const w = ctx.measureText(text).width + 8;
      const x = Math.min(this.hoverX + 6, this.width - w - 2);
      ctx.fillStyle = 'rgba(17, 24, 39, 0.85)';
      ctx.fillRect(x, AXIS_HEIGHT + 2, w, 16);
      ctx.fillStyle = '#fff';
      ctx.textBaseline = 'middle';
      ctx.fillText(text, x + 4, AXIS_HEIGHT + 10);
    }
  }

  private readonly onPointerDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    const x = event.offsetX;
    if (x < LABEL_WIDTH) {
      const lane = Math.floor((event.offsetY - AXIS_HEIGHT) / LANE_HEIGHT);
      const url = this.data?.lanes[lane];
      if (url !== undefined && event.offsetY >= AXIS_HEIGHT) this.callbacks.select(url);
      return;
    }
    this.drag = { x, v0: this.v0, v1: this.v1, moved: false, id: event.pointerId };
    this.overlay.setPointerCapture(event.pointerId);
  };

  private readonly onPointerMove = (event: PointerEvent) => {
    this.hoverX = event.offsetX;
    const drag = this.drag;
    if (!drag) return;
    const dx = event.offsetX - drag.x;
    if (!drag.moved && Math.abs(dx) < DRAG_THRESHOLD_PX) return;
    drag.moved = true;
    this.overlay.style.cursor = 'grabbing';
    const shift = (dx / this.plotWidth) * (drag.v1 - drag.v0);
    this.setView(drag.v0 - shift, drag.v1 - shift);
  };

  private readonly onPointerUp = (event: PointerEvent) => {
    const drag = this.drag;
    this.drag = undefined;
    this.overlay.style.cursor = '';
    if (drag && this.overlay.hasPointerCapture(drag.id)) this.overlay.releasePointerCapture(drag.id);
    if (drag && !drag.moved && event.offsetX >= LABEL_WIDTH) {
      const ms = Math.max(0, Math.min(this.duration(), this.msAt(event.offsetX)));
      this.callbacks.seek(ms);
    }
  };

  private readonly onWheel = (event: WheelEvent) => {
    event.preventDefault();
    const horizontal = Math.abs(event.deltaX) > Math.abs(event.deltaY) || event.shiftKey;
    const delta = horizontal ? event.deltaX || event.deltaY : event.deltaY;
    const pixels = event.deltaMode === 1 ? delta * 16 : delta;
    if (horizontal) {
      const shift = (pixels / this.plotWidth) * (this.v1 - this.v0);
      this.setView(this.v0 + shift, this.v1 + shift);
    } else {
      const center = event.offsetX > LABEL_WIDTH ? this.msAt(event.offsetX) : undefined;
      this.zoom(Math.exp(pixels * 0.002), center);
    }
  };
}

function ellipsize(ctx: CanvasRenderingContext2D, text: string, max: number): string {
  if (ctx.measureText(text).width <= max) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText('…' + text.slice(text.length - mid)).width <= max) lo = mid;
    else hi = mid - 1;
  }
  return '…' + text.slice(text.length - lo);
}
