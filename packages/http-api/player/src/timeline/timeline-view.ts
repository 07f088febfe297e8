import { drawBaseLayer } from './timeline-base-layer.js';
import type { TimelineCallbacks, TimelineData } from './timeline-data.js';
import {
  LABEL_WIDTH,
  laneUrlAt,
  msAt,
  plotWidthOf,
  timelineHeight,
  xOf,
  type TimelineGeometry,
} from './timeline-layout.js';
import { drawOverlayLayer } from './timeline-overlay-layer.js';

export type { TimelineCallbacks, TimelineData } from './timeline-data.js';
export { LABEL_WIDTH } from './timeline-layout.js';

const DRAG_THRESHOLD_PX = 4;
const MIN_SPAN_MS = 0.05;

/**
 * The timeline on two stacked canvases: the base (lanes, densities, gaps, axis) is redrawn only when the data or
 * the view changes; the overlay (replay cursor, hover line) every animation frame, from `position()`.
 *
 * Mouse: wheel zooms around the pointer (shift+wheel or a horizontal wheel pans), drag pans, a click seeks, a click
 * on a lane's label selects its url, double-click fits the whole recording.
 *
 * This class owns the state (data, view window, pointer) and the input; what is drawn where lives in
 * `timeline-base-layer.ts`, `timeline-overlay-layer.ts` and `timeline-layout.ts`.
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
    return plotWidthOf(this.width);
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

  /** The canvas size and the view window now, for drawing and hit-testing. */
  private geometry(): TimelineGeometry {
    return { width: this.width, height: this.height, beginMs: this.v0, endMs: this.v1 };
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
    this.height = timelineHeight(lanes);
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
    const cursorX = this.data ? Math.round(xOf(this.geometry(), cursorMs) * 2) / 2 : NaN;
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
    if (cursorMs > this.v1 && cursorMs - last < span && this.v1 < this.duration())
      this.setView(cursorMs - span * 0.05, cursorMs + span * 0.95);
  }

  private drawBase(): void {
    const ctx = this.context(this.base);
    ctx.clearRect(0, 0, this.width, this.height);
    if (this.data) drawBaseLayer(ctx, this.data, this.geometry());
  }

  private drawOverlay(cursorX: number): void {
    const ctx = this.context(this.overlay);
    ctx.clearRect(0, 0, this.width, this.height);
    if (this.data) drawOverlayLayer(ctx, this.data, this.geometry(), cursorX, this.hoverX);
  }

  private readonly onPointerDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    const x = event.offsetX;
    if (x < LABEL_WIDTH) {
      const url = this.data ? laneUrlAt(this.data.lanes, event.offsetY) : undefined;
      if (url !== undefined) this.callbacks.select(url);
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
      const ms = Math.max(0, Math.min(this.duration(), msAt(this.geometry(), event.offsetX)));
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
      const center = event.offsetX > LABEL_WIDTH ? msAt(this.geometry(), event.offsetX) : undefined;
      this.zoom(Math.exp(pixels * 0.002), center);
    }
  };
}
