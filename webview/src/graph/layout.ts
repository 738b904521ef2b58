// Layered layout of a DAG, top to bottom.
//
// Graphs a person reads node by node (up to a few hundred nodes, counting the bends long
// edges need) are laid out by dagre (network-simplex ranking, crossing minimisation, edge
// bends). dagre's cost grows much faster than the graph (measured on this machine: a 2k-node
// compiler-like DAG takes 17 s, 5k nodes do not finish), so larger graphs get `layered`: the
// same Sugiyama steps done cheaply — longest-path ranks with sources pulled down to their
// first use, a few barycenter sweeps, and x positions relaxed toward the neighbours' mean —
// linear in nodes + edges per sweep, so a 5k-node graph lays out in tens of milliseconds.
// Its long edges are drawn as curves, not routed around nodes.

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
  const ranks = longestPathRanks(nodes, edges);
  let bends = 0;
  for (const e of edges) bends += Math.max(0, (ranks.get(e.to) ?? 0) - (ranks.get(e.from) ?? 0) - 1);
  const useDagre = engine === 'dagre' || (engine === 'auto' && nodes.length + bends + clusters.length * 4 <= DAGRE_LIMIT);
  return useDagre ? withDagre(nodes, edges, clusters) : layered(nodes, edges, ranks, clusters);
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

/** Rank = longest path from a source; sources then move down to just above their first use. */
function longestPathRanks(nodes: LayoutNode[], edges: LayoutEdge[]): Map<string, number> {
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const n of nodes) {
    preds.set(n.id, []);
    succs.set(n.id, []);
  }
  for (const e of edges) {
    if (!preds.has(e.to) || !succs.has(e.from) || e.from === e.to) continue;
    preds.get(e.to)!.push(e.from);
    succs.get(e.from)!.push(e.to);
  }
  // Kahn's order (the caller's order breaks ties, so program order stays program order)
  const indeg = new Map<string, number>();
  for (const n of nodes) indeg.set(n.id, preds.get(n.id)!.length);
  const order: string[] = [];
  const queue = nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i];
    order.push(v);
    for (const w of succs.get(v)!) {
      const d = indeg.get(w)! - 1;
      indeg.set(w, d);
      if (d === 0) queue.push(w);
    }
  }
  if (order.length < nodes.length) for (const n of nodes) if (!order.includes(n.id)) order.push(n.id); // cycles: never in SSA
  const rank = new Map<string, number>();
  for (const v of order) {
    let r = 0;
    for (const u of preds.get(v)!) r = Math.max(r, (rank.get(u) ?? 0) + 1);
    rank.set(v, r);
  }
  for (const v of order) {
    if (preds.get(v)!.length > 0 || succs.get(v)!.length === 0) continue;
    let first = Infinity;
    for (const w of succs.get(v)!) first = Math.min(first, rank.get(w)!);
    rank.set(v, Math.max(0, first - 1));
  }
  return rank;
}

/** The clusters a node is in, outermost first (its path from the top). */
function clusterPaths(nodes: LayoutNode[], clusters: LayoutCluster[]): Map<string, string[]> {
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
  const out = new Map<string, string[]>();
  for (const n of nodes) out.set(n.id, n.parent && parentOf.has(n.parent) ? pathOf(n.parent) : []);
  return out;
}

/** Reorder a layer so each cluster's nodes sit side by side (at their mean place), nested
 * clusters inside their parents, keeping the order within a group. */
function groupLayer(layer: string[], paths: Map<string, string[]>, place: Map<string, number>, depth = 0): string[] {
  const groups = new Map<string, string[]>();
  for (const v of layer) {
    const path = paths.get(v)!;
    const k = path.length > depth ? path[depth] : `\u0000${v}`;
    const g = groups.get(k);
    if (g) g.push(v);
    else groups.set(k, [v]);
  }
  if (groups.size === layer.length) return layer;
  const mean = (g: string[]): number => g.reduce((a, v) => a + place.get(v)!, 0) / g.length;
  const ordered = [...groups.entries()].map(([k, g]) => ({ k, g, m: mean(g) })).sort((a, b) => a.m - b.m);
  const out: string[] = [];
  for (const { k, g } of ordered) out.push(...(k.startsWith('\u0000') || g.length === 1 ? g : groupLayer(g, paths, place, depth + 1)));
  return out;
}

function layered(nodes: LayoutNode[], edges: LayoutEdge[], rank: Map<string, number>, clusters: LayoutCluster[]): Layout {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const nRanks = Math.max(0, ...rank.values()) + 1;
  const layers: string[][] = Array.from({ length: nRanks }, () => []);
  for (const n of nodes) layers[rank.get(n.id)!].push(n.id);
  const up = new Map<string, string[]>();
  const down = new Map<string, string[]>();
  for (const n of nodes) {
    up.set(n.id, []);
    down.set(n.id, []);
  }
  for (const e of edges) {
    if (!byId.has(e.from) || !byId.has(e.to) || e.from === e.to) continue;
    down.get(e.from)!.push(e.to);
    up.get(e.to)!.push(e.from);
  }
  // ordering: barycenter sweeps (positions normalised per layer so long edges count too)
  const place = new Map<string, number>();
  const index = (): void => layers.forEach((l) => l.forEach((v, i) => place.set(v, (i + 0.5) / l.length)));
  index();
  const sweep = (neigh: Map<string, string[]>, from: number, to: number, step: number): void => {
    for (let r = from; r !== to; r += step) {
      const layer = layers[r];
      const key = new Map<string, number>();
      for (const v of layer) {
        const ns = neigh.get(v)!;
        key.set(v, ns.length ? ns.reduce((s, u) => s + place.get(u)!, 0) / ns.length : place.get(v)!);
      }
      layer.sort((a, b) => key.get(a)! - key.get(b)!);
      layer.forEach((v, i) => place.set(v, (i + 0.5) / layer.length));
    }
  };
  for (let i = 0; i < 2; i++) {
    sweep(up, 1, nRanks, 1);
    sweep(down, nRanks - 2, -1, -1);
  }
  if (clusters.length) {
    const paths = clusterPaths(nodes, clusters);
    layers.forEach((layer, r) => {
      layers[r] = groupLayer(layer, paths, place);
      layers[r].forEach((v, i) => place.set(v, (i + 0.5) / layers[r].length));
    });
  }
  // coordinates: y by rank; x packed, then relaxed toward the neighbours' mean keeping order
  const rankY: number[] = [];
  let y = MARGIN;
  for (const layer of layers) {
    const h = Math.max(0, ...layer.map((v) => byId.get(v)!.height));
    rankY.push(y + h / 2);
    y += h + RANK_SEP;
  }
  const x = new Map<string, number>();
  for (const layer of layers) {
    let cx = MARGIN;
    for (const v of layer) {
      const w = byId.get(v)!.width;
      x.set(v, cx + w / 2);
      cx += w + NODE_SEP;
    }
  }
  const relax = (neigh: Map<string, string[]>): void => {
    for (const layer of layers) {
      const want = layer.map((v) => {
        const ns = neigh.get(v)!;
        return ns.length ? ns.reduce((s, u) => s + x.get(u)!, 0) / ns.length : x.get(v)!;
      });
      // keep order and separation: a forward pass pushes right, a backward pass pulls left, average
      const fwd = want.slice();
      for (let i = 1; i < layer.length; i++) {
        const min = fwd[i - 1] + (byId.get(layer[i - 1])!.width + byId.get(layer[i])!.width) / 2 + NODE_SEP;
        if (fwd[i] < min) fwd[i] = min;
      }
      const bwd = want.slice();
      for (let i = layer.length - 2; i >= 0; i--) {
        const max = bwd[i + 1] - (byId.get(layer[i + 1])!.width + byId.get(layer[i])!.width) / 2 - NODE_SEP;
        if (bwd[i] > max) bwd[i] = max;
      }
      const mid = fwd.map((f, i) => (f + bwd[i]) / 2);
      for (let i = 1; i < layer.length; i++) {
        const min = mid[i - 1] + (byId.get(layer[i - 1])!.width + byId.get(layer[i])!.width) / 2 + NODE_SEP;
        if (mid[i] < min) mid[i] = min;
      }
      layer.forEach((v, i) => x.set(v, mid[i]));
    }
  };
  for (let i = 0; i < 3; i++) {
    relax(up);
    relax(down);
  }
  let minX = Infinity;
  let maxX = -Infinity;
  for (const n of nodes) {
    minX = Math.min(minX, x.get(n.id)! - n.width / 2);
    maxX = Math.max(maxX, x.get(n.id)! + n.width / 2);
  }
  const shift = Number.isFinite(minX) ? MARGIN - minX : 0;
  const pos = new Map<string, Point>();
  for (const n of nodes) pos.set(n.id, { x: x.get(n.id)! + shift, y: rankY[rank.get(n.id)!] });
  const out = edges.map((e) => {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    if (!a || !b) return [];
    return [{ x: a.x, y: a.y + byId.get(e.from)!.height / 2 }, { x: b.x, y: b.y - byId.get(e.to)!.height / 2 }];
  });
  const boxes = clusters.length ? clusterBoxes(nodes, pos, clusters) : new Map<string, Box>();
  return { pos, edges: out, width: (Number.isFinite(maxX) ? maxX - minX : 0) + 2 * MARGIN, height: y - RANK_SEP + MARGIN, engine: 'layered', clusters: boxes };
}
