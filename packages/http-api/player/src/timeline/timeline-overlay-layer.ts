import { formatTime } from '../time-format.js';
import type { TimelineData } from './timeline-data.js';
import { AXIS_HEIGHT, LABEL_WIDTH, msAt, type TimelineGeometry } from './timeline-layout.js';

/**
 * The overlay canvas, redrawn when the replay cursor or the pointer moves: the hover line, the replay cursor (a line
 * with a marker on the axis) and the time under the pointer. `cursorX` is NaN when there is no cursor to show;
 * `hoverX` undefined when the pointer is not over the timeline.
 */
export function drawOverlayLayer(
  ctx: CanvasRenderingContext2D,
  data: TimelineData,
  g: TimelineGeometry,
  cursorX: number,
  hoverX: number | undefined,
): void {
  if (hoverX !== undefined && hoverX > LABEL_WIDTH) {
    ctx.strokeStyle = 'rgba(55, 65, 81, 0.35)';
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(hoverX + 0.5, AXIS_HEIGHT);
    ctx.lineTo(hoverX + 0.5, g.height);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  if (Number.isFinite(cursorX) && cursorX >= LABEL_WIDTH && cursorX <= g.width) {
    ctx.strokeStyle = '#1d4ed8';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(cursorX, AXIS_HEIGHT - 8);
    ctx.lineTo(cursorX, g.height);
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
  if (hoverX !== undefined && hoverX > LABEL_WIDTH) {
    const text = formatTime(data.clock, msAt(g, hoverX));
    ctx.font = '11px ui-monospace, monospace';
    const w = ctx.measureText(text).width + 8;
    const x = Math.min(hoverX + 6, g.width - w - 2);
    ctx.fillStyle = 'rgba(17, 24, 39, 0.85)';
    ctx.fillRect(x, AXIS_HEIGHT + 2, w, 16);
    ctx.fillStyle = '#fff';
    ctx.textBaseline = 'middle';
    ctx.fillText(text, x + 4, AXIS_HEIGHT + 10);
  }
}
