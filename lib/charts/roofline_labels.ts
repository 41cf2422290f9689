/**
 * Labels beside the roofline's points, placed without collisions in the chart's pixels (its axes
 * are log-scaled): a step number or a peer's name each, moved clear of its neighbours where they
 * crowd, with a leader back to its point when it had to move.
 */

/** Vertical space one label needs; points within CLUSTER_PX in x of a cluster's first share it. */
const LABEL_PX = 13, CLUSTER_PX = 36;
/** Gap between a column of labels and the outermost marker of its cluster; a label's least reach. */
const LABEL_GAP_PX = 12, LABEL_REACH_PX = 40;
/** Width of one character of a point label (bold, 10 px) and half a marker, for a label's reach. */
const LABEL_CHAR_PX = 6.5, MARKER_PX = 8;

/** What placement reads of a point: where it sits, its label's text, kernel or peer. */
export interface LabelledPoint {
  intensity: number;
  gflops: number;
  tag: string;
  role: "kernel" | "peer";
}

/** A point with its label: where the text is anchored, on which side, and whether it moved. */
export type PlacedLabel<T extends LabelledPoint> = T & {
  labelIntensity: number;
  labelGflops: number;
  side: "left" | "right";
  moved: boolean;
};

/** Log-scale pixel mapping of a domain onto `px` pixels (upward for y). */
function logAxis(domain: [number, number], px: number, up: boolean) {
  const span = Math.log10(domain[1] / domain[0]);
  const to = (v: number) => {
    const f = Math.log10(v / domain[0]) / span;
    return up ? px * (1 - f) : px * f;
  };
  const from = (p: number) => domain[0] * 10 ** (span * (up ? 1 - p / px : p / px));
  return { to, from };
}

/**
 * Spread labels that want the same spot: `want` pixel positions (sorted ascending), at least
 * `gap` apart, each run of crowded labels centred on the mean of what its members wanted.
 */
function spread(want: number[], gap: number, lo: number, hi: number): number[] {
  const blocks: { start: number; items: number[] }[] = [];
  want.forEach((w, i) => {
    blocks.push({ start: w, items: [i] });
    // Merge with the block before while they overlap, re-centring the merged block.
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1], a = blocks[blocks.length - 2];
      if (a.start + a.items.length * gap <= b.start) break;
      const items = [...a.items, ...b.items];
      const mean = items.reduce((s, j) => s + want[j], 0) / items.length;
      blocks.splice(-2, 2, { start: mean - ((items.length - 1) * gap) / 2, items });
    }
  });
  const out: number[] = [];
  for (const b of blocks) {
    const start = Math.min(Math.max(b.start, lo), hi - (b.items.length - 1) * gap);
    b.items.forEach((j, k) => out[j] = start + k * gap);
  }
  return out;
}

/**
 * Label placement without collisions: points are grouped into clusters of nearby x; a cluster's
 * labels alternate right and left of it (all go to one side when the other has a neighbouring
 * cluster within a label's reach), each column of labels outside the cluster's outermost marker
 * and spread vertically so no two overlap; a label that had to move is marked `moved`, for a
 * leader to its point.
 */
export function placeLabels<T extends LabelledPoint>(
  points: T[],
  xDomain: [number, number],
  yDomain: [number, number],
  size: { width: number; height: number },
): PlacedLabel<T>[] {
  const x = logAxis(xDomain, size.width, false), y = logAxis(yDomain, size.height, true);
  const sorted = [...points].sort((a, b) => x.to(a.intensity) - x.to(b.intensity));
  const clusters: T[][] = [];
  for (const p of sorted) {
    const last = clusters.at(-1);
    const near = last && x.to(p.intensity) - x.to(last[0].intensity) < CLUSTER_PX;
    if (near) last.push(p);
    else clusters.push([p]);
  }
  const placed: PlacedLabel<T>[] = [];
  const span = (c: T[]) => c.map((p) => x.to(p.intensity));
  clusters.forEach((cluster, c) => {
    const pxs = span(cluster);
    const edge = { left: Math.min(...pxs) - LABEL_GAP_PX, right: Math.max(...pxs) + LABEL_GAP_PX };
    // A side is free when no neighbouring cluster's marker lies within a label's reach of it:
    // its gap, its text (peer names are long) and the neighbour's half marker.
    const reach = Math.max(
      LABEL_REACH_PX,
      LABEL_GAP_PX + MARKER_PX + LABEL_CHAR_PX * Math.max(...cluster.map((p) => p.tag.length)),
    );
    const free = {
      left: c === 0 || Math.min(...pxs) - Math.max(...span(clusters[c - 1])) > reach,
      right: c === clusters.length - 1 ||
        Math.min(...span(clusters[c + 1])) - Math.max(...pxs) > reach,
    };
    const only = free.left === free.right ? undefined : free.left ? "left" : "right";
    // Peers right (they sit at the far right, alone); kernels alternate, from the right.
    const kernels = cluster.filter((p) => p.role === "kernel").sort((a, b) => a.gflops - b.gflops);
    const sides = new Map<T, "left" | "right">();
    kernels.forEach((p, i) => sides.set(p, only ?? (i % 2 === 0 ? "right" : "left")));
    for (const p of cluster) if (p.role === "peer") sides.set(p, only ?? "right");
    for (const side of ["left", "right"] as const) {
      const column = cluster.filter((p) => sides.get(p) === side)
        .sort((a, b) => y.to(a.gflops) - y.to(b.gflops));
      const at = spread(column.map((p) => y.to(p.gflops)), LABEL_PX, 6, size.height - 6);
      column.forEach((p, i) => {
        const dx = Math.abs(edge[side] - x.to(p.intensity));
        const dy = Math.abs(at[i] - y.to(p.gflops));
        placed.push({
          ...p,
          labelIntensity: x.from(edge[side]),
          labelGflops: y.from(at[i]),
          side,
          moved: dx > LABEL_GAP_PX + 2 || dy > 2,
        });
      });
    }
  });
  return placed;
}
