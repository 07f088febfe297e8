/**
 * Where things are on the timeline canvas (CSS pixels): the label column on the left, the axis on top, one lane per
 * url below it; and the mapping between time and x in the plot right of the labels. Drawing and hit-testing both use
 * these, so a click lands where the thing under it was drawn.
 */

export const LABEL_WIDTH = 210;
export const AXIS_HEIGHT = 26;
export const LANE_HEIGHT = 22;
const PAD_BOTTOM = 6;

/** The canvas size and the visible time window. */
export interface TimelineGeometry {
  readonly width: number;
  readonly height: number;
  readonly beginMs: number;
  readonly endMs: number;
}

/** The canvas height for `lanes` lanes. */
export function timelineHeight(lanes: number): number {
  return AXIS_HEIGHT + lanes * LANE_HEIGHT + PAD_BOTTOM;
}

/** Width of the plot right of the label column (at least 1, so the time mapping never divides by 0). */
export function plotWidthOf(width: number): number {
  return Math.max(1, width - LABEL_WIDTH);
}

export function laneTop(lane: number): number {
  return AXIS_HEIGHT + lane * LANE_HEIGHT;
}

export function xOf(g: TimelineGeometry, ms: number): number {
  return LABEL_WIDTH + ((ms - g.beginMs) / (g.endMs - g.beginMs)) * plotWidthOf(g.width);
}

export function msAt(g: TimelineGeometry, x: number): number {
  return g.beginMs + ((x - LABEL_WIDTH) / plotWidthOf(g.width)) * (g.endMs - g.beginMs);
}

/** The url of the lane at height `y`, if any (nothing on the axis or below the last lane). */
export function laneUrlAt(lanes: readonly string[], y: number): string | undefined {
  const url = lanes[Math.floor((y - AXIS_HEIGHT) / LANE_HEIGHT)];
  return url !== undefined && y >= AXIS_HEIGHT ? url : undefined;
}
