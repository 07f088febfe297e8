import type { Density } from '../api.js';
import { formatTick, tickStep } from '../time-format.js';
import type { TimelineData } from './timeline-data.js';
import {
  AXIS_HEIGHT,
  LABEL_WIDTH,
  LANE_HEIGHT,
  laneTop,
  plotWidthOf,
  xOf,
  type TimelineGeometry,
} from './timeline-layout.js';

const COLORS = [
  '#2563eb',
  '#0d9488',
  '#9333ea',
  '#ca8a04',
  '#db2777',
  '#0891b2',
  '#65a30d',
  '#ea580c',
  '#4f46e5',
  '#059669',
];
const GAP_FILL = 'rgba(220, 38, 38, 0.22)';
const GAP_EDGE = '#dc2626';

/**
 * The base canvas: axis and grid, the shaded blank start, per lane its density bars and gaps, then the label column
 * over all of it. Redrawn only when the data or the view changes.
 */
export function drawBaseLayer(ctx: CanvasRenderingContext2D, data: TimelineData, g: TimelineGeometry): void {
  drawAxis(ctx, data, g);

  // The blank start left out by "skip blank".
  if (data.rangeBeginMs > g.beginMs) {
    const x = Math.min(g.width, xOf(g, data.rangeBeginMs));
    ctx.fillStyle = 'rgba(100, 116, 139, 0.12)';
    ctx.fillRect(LABEL_WIDTH, AXIS_HEIGHT, x - LABEL_WIDTH, g.height - AXIS_HEIGHT);
  }

  const density = densityForView(data, g);
  drawLanes(ctx, data, g, density);
  drawLabels(ctx, data, g);
  ctx.fillStyle = '#6b7280';
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText(density === data.detail && data.detail ? 'detail' : 'overview', 8, AXIS_HEIGHT / 2 - 2);
}

function drawAxis(ctx: CanvasRenderingContext2D, data: TimelineData, g: TimelineGeometry): void {
  const plotRight = g.width;
  const step = tickStep((g.endMs - g.beginMs) / plotWidthOf(g.width));
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = '#f6f7f9';
  ctx.fillRect(0, 0, g.width, AXIS_HEIGHT);
  ctx.strokeStyle = '#d0d5dc';
  ctx.beginPath();
  ctx.moveTo(0, AXIS_HEIGHT - 0.5);
  ctx.lineTo(plotRight, AXIS_HEIGHT - 0.5);
  ctx.stroke();
  const first = Math.ceil(g.beginMs / step) * step;
  for (let t = first; t <= g.endMs; t += step) {
    const x = Math.round(xOf(g, t)) + 0.5;
    ctx.strokeStyle = '#eceef1';
    ctx.beginPath();
    ctx.moveTo(x, AXIS_HEIGHT);
    ctx.lineTo(x, g.height);
    ctx.stroke();
    ctx.strokeStyle = '#9aa3ad';
    ctx.beginPath();
    ctx.moveTo(x, AXIS_HEIGHT - 6);
    ctx.lineTo(x, AXIS_HEIGHT);
    ctx.stroke();
    ctx.fillStyle = '#4b5563';
    ctx.fillText(formatTick(data.clock, t, step), x + 3, AXIS_HEIGHT / 2 - 2);
  }
}

function drawLanes(
  ctx: CanvasRenderingContext2D,
  data: TimelineData,
  g: TimelineGeometry,
  density: Density | undefined,
): void {
  const plotRight = g.width;
  const byUrl = new Map(density?.urls.map((u) => [u.url, u]) ?? []);
  data.lanes.forEach((url, lane) => {
    const top = laneTop(lane);
    const excluded = data.excluded.has(url);
    const color = excluded ? '#b6bcc4' : COLORS[lane % COLORS.length]!;
    if (url === data.selected) {
      ctx.fillStyle = 'rgba(37, 99, 235, 0.08)';
      ctx.fillRect(0, top, g.width, LANE_HEIGHT);
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
        if (b1 < g.beginMs || b0 > g.endMs) continue;
        const x0 = Math.max(LABEL_WIDTH, xOf(g, b0));
        const x1 = Math.min(plotRight, xOf(g, b1));
        const h = Math.max(2, Math.sqrt(c / d.max) * inner);
        ctx.fillRect(x0, top + LANE_HEIGHT - 3 - h, Math.max(1, x1 - x0), h);
      }
      ctx.globalAlpha = 1;
    }

    // Gaps: in the warning colour over the lane, at least 3 px wide so a short one shows when zoomed out.
    for (const gap of data.gaps.get(url) ?? []) {
      const g0 = gap.startUs / 1000;
      const g1 = (gap.startUs + gap.lengthUs) / 1000;
      if (g1 < g.beginMs || g0 > g.endMs) continue;
      const x0 = Math.max(LABEL_WIDTH, xOf(g, g0));
      const x1 = Math.max(x0 + 3, Math.min(plotRight, xOf(g, g1)));
      ctx.fillStyle = GAP_FILL;
      ctx.fillRect(x0, top + 1, x1 - x0, LANE_HEIGHT - 2);
      ctx.fillStyle = GAP_EDGE;
      ctx.fillRect(x0, top + 1, x1 - x0, 2);
    }
  });
}

/** Labels last, over anything that was drawn under the label column. */
function drawLabels(ctx: CanvasRenderingContext2D, data: TimelineData, g: TimelineGeometry): void {
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, AXIS_HEIGHT, LABEL_WIDTH, g.height - AXIS_HEIGHT);
  ctx.strokeStyle = '#d0d5dc';
  ctx.beginPath();
  ctx.moveTo(LABEL_WIDTH - 0.5, 0);
  ctx.lineTo(LABEL_WIDTH - 0.5, g.height);
  ctx.stroke();
  ctx.font = '12px ui-monospace, SFMono-Regular, Menlo, monospace';
  data.lanes.forEach((url, lane) => {
    const top = laneTop(lane);
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
}

/** The detail density when it covers the view (it was fetched for it), else the overview. */
function densityForView(data: TimelineData, g: TimelineGeometry): Density | undefined {
  const d = data.detail;
  const tolerance = (g.endMs - g.beginMs) * 0.01;
  if (
    d &&
    d.beginMs <= g.beginMs + tolerance &&
    d.endMs >= g.endMs - tolerance &&
    d.endMs - d.beginMs <= (g.endMs - g.beginMs) * 4
  )
    return d;
  return data.overview;
}

function ellipsize(ctx: CanvasRenderingContext2D, text: string, max: number): string {
  if (ctx.measureText(text).width <= max) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`…${text.slice(text.length - mid)}`).width <= max) lo = mid;
    else hi = mid - 1;
  }
  return `…${text.slice(text.length - lo)}`;
}
