// Layered layout of a DAG, top to bottom.
//
// Graphs a person reads node by node (up to a few hundred nodes, counting the bends long
// edges need) are laid out by dagre (network-simplex ranking, crossing minimisation, edge
// bends). dagre's cost grows much faster than the graph (measured on this machine: a 2k-node
// compiler-like DAG takes 17 s, 5k nodes do not finish), so larger graphs get `layered`: the
// same Sugiyama steps done cheaply — longest-path ranks with sources pulled down to their
// first use, a few barycenter sweeps, and x positions relaxed toward the neighbours' mean —
// linear in nodes + edges per sweep (on typed arrays), so a 5k-node graph lays out in tens of
// milliseconds. Its long edges are drawn as curves, not routed around nodes.
//
// Clusters (a loop body, a helper call's nodes): dagre lays them out as compound nodes; the
// layered layout keeps each cluster's nodes side by side in every rank and boxes them.

import { graphlib, layout as dagreLayout } from '@dagrejs/dagre';

export interface LayoutNode {
  id: string;
  width: number;
  height: number;
  /** The cluster the node is drawn in (a loop body, a function call's nodes). */
  parent?: string | null;
}

/** A box drawn around nodes (and nested clusters) that belong together. */
export interface LayoutCluster {
  id: string;
  parent: string | null;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutEdge {
  from: string;
  to: string;
}

export interface Point {
  x: number;
  y: number;
}

export interface Layout {
  /** Node centres. */
  pos: Map<string, Point>;
  /** Edge polylines (from the source's bottom to the target's top), in edge order. */
  edges: Point[][];
  width: number;
  height: number;
  engine: 'dagre' | 'layered';
  /** Cluster boxes (top-left corner and size), by cluster id. */
  clusters: Map<string, Box>;
}

const NODE_SEP = 24;
const RANK_SEP = 44;
const MARGIN = 20;
/** Room inside a cluster box around its nodes, and above them for its title. */
const PAD = 12;
const TITLE = 18;

/** dagre is used while nodes plus the bends of long edges stay under this. */
export const DAGRE_LIMIT = 400;

export function layoutGraph(nodes: LayoutNode[], edges: LayoutEdge[], engine: 'auto' | 'dagre' | 'layered' = 'auto', clusters: LayoutCluster[] = []): Layout {
  if (nodes.length === 0) return { pos: new Map(), edges: [], width: 0, height: 0, engine: 'layered', clusters: new Map() };
  const g = indexed(nodes, edges);
  const rank = longestPathRanks(g);
  let bends = 0;
  for (let i = 0; i < edges.length; i++) if (g.src[i] >= 0) bends += Math.max(0, rank[g.dst[i]] - rank[g.src[i]] - 1);
  const useDagre = engine === 'dagre' || (engine === 'auto' && nodes.length + bends + clusters.length * 4 <= DAGRE_LIMIT);
  return useDagre ? withDagre(nodes, edges, clusters) : layered(nodes, edges, g, rank, clusters);
}

function withDagre(nodes: LayoutNode[], edges: LayoutEdge[], clusters: LayoutCluster[]): Layout {
  const compound = clusters.length > 0;
  const g = new graphlib.Graph({ multigraph: true, compound });
  g.setGraph({ rankdir: 'TB', nodesep: NODE_SEP, ranksep: RANK_SEP, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: n.width, height: n.height });
  const known = new Set(clusters.map((c) => c.id));
  for (const c of clusters) g.setNode(c.id, {});
  for (const c of clusters) if (c.parent !== null && known.has(c.parent)) g.setParent(c.id, c.parent);
  if (compound) for (const n of nodes) if (n.parent && known.has(n.parent)) g.setParent(n.id, n.parent);
  edges.forEach((e, i) => g.setEdge(e.from, e.to, {}, `e${i}`));
  dagreLayout(g);
  const pos = new Map<string, Point>();
  for (const n of nodes) {
    const v = g.node(n.id) as { x: number; y: number };
    pos.set(n.id, { x: v.x, y: v.y });
  }
  const out = edges.map((e, i) => {
    const lab = g.edge({ v: e.from, w: e.to, name: `e${i}` }) as { points?: Point[] } | undefined;
    return lab?.points ? lab.points.map((p) => ({ x: p.x, y: p.y })) : straight(pos, nodes, e);
  });
  const boxes = new Map<string, Box>();
  for (const c of clusters) {
    const v = g.node(c.id) as { x?: number; y?: number; width?: number; height?: number } | undefined;
    if (v && v.x !== undefined && v.y !== undefined && v.width && v.height) {
      boxes.set(c.id, { x: v.x - v.width / 2, y: v.y - v.height / 2, width: v.width, height: v.height });
    }
  }
  const label = g.graph() as { width?: number; height?: number };
  return { pos, edges: out, width: label.width ?? 0, height: label.height ?? 0, engine: 'dagre', clusters: boxes };
}

/** Each cluster's box: around its nodes and nested clusters, with room for its title. */
function clusterBoxes(nodes: LayoutNode[], pos: Map<string, Point>, clusters: LayoutCluster[]): Map<string, Box> {
  const parentOf = new Map(clusters.map((c) => [c.id, c.parent]));
  const depth = (id: string): number => {
    let d = 0;
    for (let p = parentOf.get(id); p !== null && p !== undefined; p = parentOf.get(p)) d++;
    return d;
  };
  const ext = new Map<string, [number, number, number, number]>();
  const grow = (id: string, x0: number, y0: number, x1: number, y1: number): void => {
    const e = ext.get(id);
    if (e) ext.set(id, [Math.min(e[0], x0), Math.min(e[1], y0), Math.max(e[2], x1), Math.max(e[3], y1)]);
    else ext.set(id, [x0, y0, x1, y1]);
  };
  for (const n of nodes) {
    const p = pos.get(n.id);
    if (p && n.parent && parentOf.has(n.parent)) grow(n.parent, p.x - n.width / 2, p.y - n.height / 2, p.x + n.width / 2, p.y + n.height / 2);
  }
  // innermost first, so a cluster's box holds its nested clusters' boxes
  const boxes = new Map<string, Box>();
  for (const c of [...clusters].sort((a, b) => depth(b.id) - depth(a.id))) {
    const e = ext.get(c.id);
    if (!e) continue;
    const box = { x: e[0] - PAD, y: e[1] - PAD - TITLE, width: e[2] - e[0] + 2 * PAD, height: e[3] - e[1] + 2 * PAD + TITLE };
    boxes.set(c.id, box);
    if (c.parent !== null && parentOf.has(c.parent)) grow(c.parent, box.x, box.y, box.x + box.width, box.y + box.height);
  }
  return boxes;
}

function straight(pos: Map<string, Point>, nodes: LayoutNode[], e: LayoutEdge): Point[] {
  const a = pos.get(e.from)!;
  const b = pos.get(e.to)!;
  const ha = nodes.find((n) => n.id === e.from)?.height ?? 0;
  const hb = nodes.find((n) => n.id === e.to)?.height ?? 0;
  return [{ x: a.x, y: a.y + ha / 2 }, { x: b.x, y: b.y - hb / 2 }];
}

/** The graph by integer index: each node's predecessors and successors (CSR arrays). */
interface Indexed {
  n: number;
  index: Map<string, number>;
  /** Edge i goes from src[i] to dst[i] (-1: an end is not a node, or a self-loop). */
  src: Int32Array;
  dst: Int32Array;
  upStart: Int32Array;
  up: Int32Array;
  downStart: Int32Array;
  down: Int32Array;
}

function indexed(nodes: LayoutNode[], edges: LayoutEdge[]): Indexed {
  const n = nodes.length;
  const index = new Map<string, number>();
  nodes.forEach((v, i) => index.set(v.id, i));
  const src = new Int32Array(edges.length).fill(-1);
  const dst = new Int32Array(edges.length).fill(-1);
  const upCount = new Int32Array(n + 1);
  const downCount = new Int32Array(n + 1);
  edges.forEach((e, i) => {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) return;
    src[i] = a;
    dst[i] = b;
    upCount[b + 1]++;
    downCount[a + 1]++;
  });
  for (let i = 0; i < n; i++) {
    upCount[i + 1] += upCount[i];
    downCount[i + 1] += downCount[i];
  }
  const up = new Int32Array(upCount[n]);
  const down = new Int32Array(downCount[n]);
  const ui = upCount.slice(0, n);
  const di = downCount.slice(0, n);
  for (let i = 0; i < edges.length; i++) {
    if (src[i] < 0) continue;
    up[ui[dst[i]]++] = src[i];
    down[di[src[i]]++] = dst[i];
  }
  return { n, index, src, dst, upStart: upCount, up, downStart: downCount, down };
}

/** Rank = longest path from a source; sources then move down to just above their first use. */
function longestPathRanks(g: Indexed): Int32Array {
  const { n, upStart, up, downStart, down } = g;
  // Kahn's order (the caller's order breaks ties, so program order stays program order)
  const indeg = new Int32Array(n);
  for (let v = 0; v < n; v++) indeg[v] = upStart[v + 1] - upStart[v];
  const order = new Int32Array(n);
  let tail = 0;
  for (let v = 0; v < n; v++) if (indeg[v] === 0) order[tail++] = v;
  for (let head = 0; head < tail; head++) {
    const v = order[head];
    for (let k = downStart[v]; k < downStart[v + 1]; k++) if (--indeg[down[k]] === 0) order[tail++] = down[k];
  }
  if (tail < n) {
    // cycles: never in SSA; the rest in the caller's order
    const placed = new Uint8Array(n);
    for (let i = 0; i < tail; i++) placed[order[i]] = 1;
    for (let v = 0; v < n; v++) if (!placed[v]) order[tail++] = v;
  }
  const rank = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = order[i];
    let r = 0;
    for (let k = upStart[v]; k < upStart[v + 1]; k++) r = Math.max(r, rank[up[k]] + 1);
    rank[v] = r;
  }
  for (let i = 0; i < n; i++) {
    const v = order[i];
    if (upStart[v + 1] > upStart[v] || downStart[v + 1] === downStart[v]) continue;
    let first = Infinity;
    for (let k = downStart[v]; k < downStart[v + 1]; k++) first = Math.min(first, rank[down[k]]);
    rank[v] = Math.max(0, first - 1);
  }
  return rank;
}

/** The clusters a node is in, outermost first (its path from the top). */
function clusterPaths(nodes: LayoutNode[], clusters: LayoutCluster[]): string[][] {
  const parentOf = new Map(clusters.map((c) => [c.id, c.parent]));
  const memo = new Map<string, string[]>();
  const pathOf = (c: string): string[] => {
    const got = memo.get(c);
    if (got) return got;
    const p = parentOf.get(c);
    const path = p !== null && p !== undefined && parentOf.has(p) ? [...pathOf(p), c] : [c];
    memo.set(c, path);
    return path;
  };
  return nodes.map((v) => (v.parent && parentOf.has(v.parent) ? pathOf(v.parent) : []));
}

/** Reorder a layer so each cluster's nodes sit side by side (at their mean place), nested
 * clusters inside their parents, keeping the order within a group. */
function groupLayer(layer: number[], paths: string[][], place: Float64Array, depth = 0): number[] {
  const groups = new Map<string, number[]>();
  for (const v of layer) {
    const path = paths[v];
    const k = path.length > depth ? path[depth] : `\u0000${v}`;
    const g = groups.get(k);
    if (g) g.push(v);
    else groups.set(k, [v]);
  }
  if (groups.size === layer.length) return layer;
  const mean = (g: number[]): number => g.reduce((a, v) => a + place[v], 0) / g.length;
  const ordered = [...groups.entries()].map(([k, g]) => ({ k, g, m: mean(g) })).sort((a, b) => a.m - b.m);
  const out: number[] = [];
  for (const { k, g } of ordered) out.push(...(k.startsWith('\u0000') || g.length === 1 ? g : groupLayer(g, paths, place, depth + 1)));
  return out;
}

function layered(nodes: LayoutNode[], edges: LayoutEdge[], g: Indexed, rank: Int32Array, clusters: LayoutCluster[]): Layout {
  const { n, upStart, up, downStart, down } = g;
  const width = Float64Array.from(nodes, (v) => v.width);
  const height = Float64Array.from(nodes, (v) => v.height);
  let nRanks = 0;
  for (let v = 0; v < n; v++) nRanks = Math.max(nRanks, rank[v] + 1);
  const layers: number[][] = Array.from({ length: nRanks }, () => []);
  for (let v = 0; v < n; v++) layers[rank[v]].push(v);
  // ordering: barycenter sweeps (positions normalised per layer so long edges count too)
  const place = new Float64Array(n);
  const renumber = (l: number[]): void => {
    for (let i = 0; i < l.length; i++) place[l[i]] = (i + 0.5) / l.length;
  };
  layers.forEach(renumber);
  const key = new Float64Array(n);
  const sweep = (start: Int32Array, adj: Int32Array, from: number, to: number, step: number): void => {
    for (let r = from; r !== to; r += step) {
      const layer = layers[r];
      for (const v of layer) {
        const a = start[v];
        const b = start[v + 1];
        if (a === b) {
          key[v] = place[v];
          continue;
        }
        let sum = 0;
        for (let k = a; k < b; k++) sum += place[adj[k]];
        key[v] = sum / (b - a);
      }
      layer.sort((x, y) => key[x] - key[y]);
      renumber(layer);
    }
  };
  for (let i = 0; i < 2; i++) {
    sweep(upStart, up, 1, nRanks, 1);
    sweep(downStart, down, nRanks - 2, -1, -1);
  }
  if (clusters.length) {
    const paths = clusterPaths(nodes, clusters);
    layers.forEach((layer, r) => {
      layers[r] = groupLayer(layer, paths, place);
      renumber(layers[r]);
    });
  }
  // coordinates: y by rank; x packed, then relaxed toward the neighbours' mean keeping order
  const rankY = new Float64Array(nRanks);
  let y = MARGIN;
  layers.forEach((layer, r) => {
    let h = 0;
    for (const v of layer) h = Math.max(h, height[v]);
    rankY[r] = y + h / 2;
    y += h + RANK_SEP;
  });
  const x = new Float64Array(n);
  for (const layer of layers) {
    let cx = MARGIN;
    for (const v of layer) {
      x[v] = cx + width[v] / 2;
      cx += width[v] + NODE_SEP;
    }
  }
  let want = new Float64Array(0);
  let fwd = new Float64Array(0);
  let bwd = new Float64Array(0);
  const relax = (start: Int32Array, adj: Int32Array): void => {
    for (const layer of layers) {
      const m = layer.length;
      if (want.length < m) {
        want = new Float64Array(m * 2);
        fwd = new Float64Array(m * 2);
        bwd = new Float64Array(m * 2);
      }
      for (let i = 0; i < m; i++) {
        const v = layer[i];
        const a = start[v];
        const b = start[v + 1];
        let sum = 0;
        for (let k = a; k < b; k++) sum += x[adj[k]];
        want[i] = a === b ? x[v] : sum / (b - a);
      }
      // keep order and separation: a forward pass pushes right, a backward pass pulls left, average
      fwd[0] = want[0];
      for (let i = 1; i < m; i++) fwd[i] = Math.max(want[i], fwd[i - 1] + (width[layer[i - 1]] + width[layer[i]]) / 2 + NODE_SEP);
      bwd[m - 1] = want[m - 1];
      for (let i = m - 2; i >= 0; i--) bwd[i] = Math.min(want[i], bwd[i + 1] - (width[layer[i + 1]] + width[layer[i]]) / 2 - NODE_SEP);
      let prev = -Infinity;
      for (let i = 0; i < m; i++) {
        let mid = (fwd[i] + bwd[i]) / 2;
        if (i > 0) mid = Math.max(mid, prev + (width[layer[i - 1]] + width[layer[i]]) / 2 + NODE_SEP);
        x[layer[i]] = mid;
        prev = mid;
      }
    }
  };
  for (let i = 0; i < 3; i++) {
    relax(upStart, up);
    relax(downStart, down);
  }
  let minX = Infinity;
  let maxX = -Infinity;
  for (let v = 0; v < n; v++) {
    minX = Math.min(minX, x[v] - width[v] / 2);
    maxX = Math.max(maxX, x[v] + width[v] / 2);
  }
  const shift = Number.isFinite(minX) ? MARGIN - minX : 0;
  const pos = new Map<string, Point>();
  for (let v = 0; v < n; v++) pos.set(nodes[v].id, { x: x[v] + shift, y: rankY[rank[v]] });
  const out = edges.map((_, i): Point[] => {
    const a = g.src[i];
    const b = g.dst[i];
    if (a < 0) return [];
    return [{ x: x[a] + shift, y: rankY[rank[a]] + height[a] / 2 }, { x: x[b] + shift, y: rankY[rank[b]] - height[b] / 2 }];
  });
  const boxes = clusters.length ? clusterBoxes(nodes, pos, clusters) : new Map<string, Box>();
  return { pos, edges: out, width: (Number.isFinite(maxX) ? maxX - minX : 0) + 2 * MARGIN, height: y - RANK_SEP + MARGIN, engine: 'layered', clusters: boxes };
}
