"""The pages `pypto-ide serve` renders itself.

- `picker_page`: the front page when the webview bundle (webview/dist) is built — the
  workspace's files and kernels, each with its status and latest makespan and links that open
  its panels, and the workspace's traces, each opening in the swimlane panel (`trace_page`,
  which frames `trace_panel_page`).
- `PAGE`: the page at `/` until the bundle is built (`minimal_page` gives it its nonce).

Every page carries a Content-Security-Policy (`csp`): nothing but its own scripts and styles, by a
fresh nonce per response; no external script or style.

`PAGE` is deliberately small: the kernels of the workspace with links to their JSON, the
workspace's traces (links to their swimlane JSON), a button that profiles one, the result's
slowest tasks, and a source view — clicking a task shows the lines it runs. It uses only the
public API (`/api/v1`) and the WebSocket, so it is also a worked example for the browser host
of the real panels. No external scripts or styles.
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import urlencode

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PyPTO IDE</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
button{font-size:12px}.muted{color:#777}.err{color:#b00}
#panes{display:flex;gap:2em;align-items:flex-start;margin-top:1em}
#tasks tr{cursor:pointer}#tasks tr:hover{background:#f4f4ff}
pre{background:#fafafa;border:1px solid #ddd;padding:6px;max-height:70vh;overflow:auto;margin:0}
.hl{background:#fff3b0;display:block}
</style></head><body>
<h2>PyPTO IDE <span class="muted" id="ws">connecting…</span></h2>
<div id="workspace" class="muted"></div>
<table id="kernels"><thead><tr><th>kernel</th><th>line</th><th>version</th><th></th></tr></thead><tbody></tbody></table>
<div id="errors" class="err"></div>
<h3>Traces</h3><div id="traces" class="muted"></div>
<div id="panes"><div><h3 id="title"></h3><div id="summary"></div><table id="tasks"></table></div>
<div><h3 id="srctitle"></h3><pre id="src"></pre></div></div>
<script>
const api = "/api/v1";
let current = null;  // {kernel, job}
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
async function get(path) {
  const r = await fetch(api + path);
  if (!r.ok) throw new Error((await r.json()).detail);
  return r.json();
}
async function loadKernels() {
  const d = await get("/kernels");
  document.getElementById("workspace").textContent = d.workspace;
  document.querySelector("#kernels tbody").innerHTML = d.kernels.map(k => `<tr><td>${esc(k.id)}</td><td>${k.line}</td>
    <td>${k.version}</td><td><button data-k="${esc(k.id)}" data-a="profile">profile</button>
    <button data-src="${esc(k.file)}" data-line="${k.line}" data-end="${k.end_line}">source</button>
    ${k.latest_job ? `<a href="${api}/jobs/${k.latest_job}/result">result</a>
    <a href="${api}/jobs/${k.latest_job}/record">record</a>
    <a href="#" data-show="${k.latest_job}" data-k="${esc(k.id)}">show</a>` : ""}</td></tr>`).join("");
  document.getElementById("errors").innerHTML =
    d.errors.map(e => `${esc(e.file)}:${e.error.line}: ${esc(e.error.message)}`).join("<br>");
  const t = await get("/traces");  // without the panel bundle: each trace's swimlane JSON
  document.getElementById("traces").innerHTML = t.traces.length ? t.traces.map(x =>
    `<a href="${api}/traces/swimlane?path=${encodeURIComponent(x.path)}">${esc(x.path)}</a> (${esc(x.kind)})`)
    .join("<br>") : "no trace files in the workspace";
}
async function profile(kernel) {
  const r = await fetch(api + "/jobs", {method: "POST", headers: {"Content-Type": "application/json"},
                                        body: JSON.stringify({kernel, action: "profile"})});
  const j = await r.json();
  document.getElementById("title").textContent = r.ok ? `${kernel}: ${j.status}…` : `${kernel}: ${j.detail}`;
  if (r.ok) current = {kernel, job: j.id};
}
async function show(kernel, job) {
  current = {kernel, job};
  const j = await get(`/jobs/${job}`);
  const t = document.getElementById("title"), s = document.getElementById("summary");
  t.textContent = `${kernel} (v${j.version}, ${j.status})`;
  if (j.error) { s.innerHTML = `<span class="err">line ${j.error.line}: ${esc(j.error.message)}</span>`;
                 document.getElementById("tasks").innerHTML = ""; return; }
  if (!j.summary) { s.textContent = j.failure ? `${j.failure.kind}: ${j.failure.message}` : j.status; return; }
  const m = j.summary;
  s.innerHTML = `${esc(m.board)} · ${esc(m.clock)}<br>makespan ${m.makespan_us.toFixed(2)} µs · ${m.tasks} tasks ·
    utilization ${(100 * m.utilization).toFixed(0)}% · bound: ${esc(m.bound)}<br>slowest tasks (click for source):`;
  const w = await get(`/jobs/${job}/swimlane`), c = w.tasks;
  const rows = c.id.map((id, k) => ({id, lane: w.lanes[c.lane[k]].name, d: c.end[k] - c.start[k], leaf: c.leaf[k]}))
    .sort((a, b) => b.d - a.d).slice(0, 20);
  document.getElementById("tasks").innerHTML = rows.map(r => `<tr data-task="${r.id}"><td>#${r.id}</td>
    <td>${r.lane}</td><td>leaf ${r.leaf}</td><td>${r.d.toFixed(3)} µs</td></tr>`).join("");
}
async function source(path, lines) {
  const d = await get(`/source?path=${encodeURIComponent(path)}`);
  document.getElementById("srctitle").textContent = d.path;
  const pre = document.getElementById("src");
  pre.innerHTML = d.lines.map((l, i) =>
    `<span class="${lines.has(i + 1) ? "hl" : ""}">${String(i + 1).padStart(4)}  ${esc(l)}</span>`).join("\\n");
  const first = pre.querySelector(".hl"); if (first) first.scrollIntoView({block: "center"});
}
async function taskSource(job, task) {
  const d = await get(`/jobs/${job}/tasks/${task}`);
  if (!d.source.length) return;
  const file = d.source[0].file, lines = new Set(d.source.filter(s => s.file === file).map(s => s.line));
  await source(file, lines);
}
document.addEventListener("click", ev => {
  const e = ev.target.closest("[data-k],[data-src],[data-task]"); if (!e) return;
  if (e.dataset.show) { ev.preventDefault(); show(e.dataset.k, e.dataset.show); }
  else if (e.dataset.a) profile(e.dataset.k);
  else if (e.dataset.src) { const a = +e.dataset.line, b = +e.dataset.end;
    source(e.dataset.src, new Set(Array.from({length: b - a + 1}, (_, i) => a + i))); }
  else if (e.dataset.task && current) taskSource(current.job, e.dataset.task);
});
function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${api}/ws`);
  const status = document.getElementById("ws");
  ws.onopen = () => status.textContent = "live";
  ws.onclose = () => { status.textContent = "disconnected"; setTimeout(connect, 2000); };
  ws.onmessage = ev => {
    const m = JSON.parse(ev.data);
    if (m.type === "hello" || m.type === "kernelsChanged") loadKernels();
    if (m.type === "recordChanged") {
      loadKernels();
      if (current && current.kernel === m.kernel) show(m.kernel, m.job);
    }
    if (m.type === "jobChanged" && current && current.job === m.job.id && m.job.status !== "done")
      document.getElementById("title").textContent = `${m.job.kernel}: ${m.job.status}` +
        (m.job.failure ? ` (${m.job.failure.kind}: ${m.job.failure.message})` : "");
  };
}
loadKernels().catch(e => document.getElementById("errors").textContent = e.message);
connect();
</script></body></html>
"""


def minimal_page(nonce: str) -> str:
    """`PAGE` with its script and style carrying `nonce` (served with `csp(nonce)`)."""
    return PAGE.replace("<style>", f'<style nonce="{nonce}">', 1).replace("<script>", f'<script nonce="{nonce}">', 1)


# ---- the front page with the panel bundle: a kernel picker and the workspace's traces -----------------------

PANEL_LINKS = (("swimlane", "swimlane"), ("graph", "graph"), ("health", "health"), ("precision", "precision"))
STATUS_CLASS = {"done": "ok", "error": "err", "failed": "err", "cancelled": "muted", "never run": "muted",
                "queued": "busy", "running": "busy"}

_STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.3em 0 1em}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #eee}
th{font-weight:600;color:#555}.muted{color:#777}.err{color:#b00}.ok{color:#1a7f37}.busy{color:#9a6700}
.num{text-align:right;font-variant-numeric:tabular-nums}h3{margin:1.2em 0 .2em}code{background:#f5f5f5;padding:0 3px}
a{color:#0b57d0}.file td{background:#fafafa;font-weight:600}"""


def csp(nonce: str, *, frames: bool = False) -> str:
    """The Content-Security-Policy of a page the server renders: nothing but its own nonce'd scripts
    and styles, same-origin fetches and WebSocket, and (the trace view) same-origin frames."""
    parts = ["default-src 'none'", f"script-src 'nonce-{nonce}'", f"style-src 'nonce-{nonce}'",
             "connect-src 'self'"]
    if frames:
        parts.append("frame-src 'self'")
    parts.append("base-uri 'none'")
    parts.append("form-action 'none'")
    return "; ".join(parts)


def _fmt_us(x: Any) -> str:
    return f"{x:,.2f} µs" if isinstance(x, int | float) else "–"


def _size(n: int) -> str:
    for unit, k in (("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if n >= k:
            return f"{n / k:,.1f} {unit}"
    return f"{n} B"


def picker_body(files: list[dict[str, Any]], traces: list[dict[str, Any]], truncated: bool, base: str,
                dumps: list[dict[str, Any]] | None = None) -> str:
    """The picker's HTML (every text escaped): files → kernels with status and latest makespan, each
    linking to its panels; the traces, each opening in the swimlane panel (`/traces/view`); PyPTO 3's
    `passes_dump/` folders, each opening in the passes panel (`passes.html?dump=`)."""
    e = html.escape
    rows = []
    for f in files:
        err = f.get("error")
        note = (f" <span class='err'>does not import: line {e(str(err.get('line')))}: {e(str(err.get('message')))}"
                "</span>") if err else ""
        rows.append(f"<tr class='file'><td colspan='5'><code>{e(f['file'])}</code>{note}</td></tr>")
        for k in f["kernels"]:
            q = urlencode({"kernel": k["id"]})
            links = " · ".join(f"<a href='{e(base)}{p}.html?{e(q)}'>{label}</a>" for p, label in PANEL_LINKS)
            status = k["status"]
            msg = f" <span class='muted'>{e(k['message'][:160])}</span>" if k.get("message") else ""
            stale = " <span class='muted'>(stale)</span>" if k.get("stale") and k.get("makespan_us") is not None else ""
            rows.append(f"<tr class='kernel' data-kernel='{e(k['id'])}'><td><a href='{e(base)}swimlane.html?{e(q)}'>"
                        f"{e(k['name'])}</a> <span class='muted'>line {int(k['line'])}</span></td>"
                        f"<td class='status {STATUS_CLASS.get(status, '')}'>{e(status)}{msg}</td>"
                        f"<td class='num makespan'>{_fmt_us(k.get('makespan_us'))}{stale}</td>"
                        f"<td class='muted'>{e(k.get('board') or '')}</td><td>{links}</td></tr>")
    kernels = ("<table id='kernels'><tr><th>kernel</th><th>status</th><th>makespan</th><th>board</th>"
               "<th>open</th></tr>" + "".join(rows) + "</table>") if rows else (
        "<p class='muted' id='kernels'>No kernels found yet (a kernel file names <code>pypto</code> and "
        "<code>jit</code>).</p>")
    trows = [f"<tr class='trace'><td><a href='/traces/view?{e(urlencode({'path': t['path']}))}'>{e(t['path'])}</a>"
             f"</td><td class='muted'>{e(t['kind'])}</td><td class='num'>{_size(int(t['size']))}</td></tr>"
             for t in traces]
    more = "<p class='muted'>(more traces than listed)</p>" if truncated else ""
    trace_html = ("<table id='traces'><tr><th>trace</th><th>format</th><th>size</th></tr>" + "".join(trows)
                  + "</table>" + more) if trows else (
        "<p class='muted' id='traces'>No trace files in the workspace (a swimlane JSON, a Chrome trace, "
        "<code>merged_swimlane.json</code>, <code>tilefwk_L1_prof_data.json</code>, "
        "<code>chip_swimlane_records.json</code>).</p>")
    drows = [f"<tr class='passdump'><td><a href='{e(base)}passes.html?{e(urlencode({'dump': d['path']}))}'>"
             f"{e(d['path'])}</a></td><td class='num'>{int(d['snapshots'])} snapshots</td></tr>" for d in dumps or []]
    dump_html = ("<h3>Pass dumps</h3><table id='passdumps'><tr><th>PyPTO 3 passes_dump/</th><th>passes</th></tr>"
                 + "".join(drows) + "</table>") if drows else ""
    return f"<h3>Kernels</h3>{kernels}<h3>Traces</h3>{trace_html}{dump_html}"


def picker_page(workspace: str, body: str, nonce: str, base: str) -> str:
    """The front page: the picker (server-rendered, so it works before any script runs) and a small
    script that re-renders it (fetching this page again) when the WebSocket says something changed."""
    e = html.escape
    panels = " · ".join(f"<a href='{e(base)}{p}.html'>{label}</a>" for p, label in PANEL_LINKS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(csp(nonce))}">
<title>PyPTO IDE</title><style nonce="{nonce}">{_STYLE}</style></head><body>
<h2>PyPTO IDE <span class="muted" id="ws">connecting…</span></h2>
<div class="muted">workspace <code>{e(workspace)}</code> · panels on the first kernel: {panels} ·
<a href="/api/v1/kernels">kernels JSON</a> · <a href="/docs">API</a></div>
<div id="picker">{body}</div>
<script nonce="{nonce}">
let timer = null;
async function refresh() {{
  const r = await fetch(location.pathname + location.search, {{credentials: "same-origin"}});
  if (!r.ok) return;
  const doc = new DOMParser().parseFromString(await r.text(), "text/html");
  const fresh = doc.getElementById("picker");
  if (fresh) document.getElementById("picker").replaceChildren(...fresh.childNodes);
}}
function later() {{ clearTimeout(timer); timer = setTimeout(() => refresh().catch(() => undefined), 250); }}
function connect() {{
  const ws = new WebSocket(`${{location.protocol === "https:" ? "wss" : "ws"}}://${{location.host}}/api/v1/ws`);
  const status = document.getElementById("ws");
  ws.onopen = () => {{ status.textContent = "live"; }};
  ws.onclose = () => {{ status.textContent = "disconnected"; setTimeout(connect, 2000); }};
  ws.onmessage = ev => {{
    const m = JSON.parse(ev.data);
    if (["kernelsChanged", "jobChanged", "recordChanged", "fileChanged"].includes(m.type)) later();
  }};
}}
connect();
</script></body></html>
"""


def trace_page(path: str, nonce: str, base: str, has_panel: bool) -> str:
    """A trace in the swimlane panel: the panel runs in a same-origin frame as a `parent`-hosted page
    (`/traces/panel`); this page answers its `ready` with the trace's swimlane
    (`GET /api/v1/traces/swimlane?path=`) as the panel's `swimlane` message (webview/src/protocol.ts).
    Without the panel bundle it shows the trace's figures."""
    e = html.escape
    src = f"/api/v1/traces/swimlane?{urlencode({'path': path})}"
    frame = ("<iframe id='panel' src='/traces/panel' title='swimlane'></iframe>" if has_panel else
             "<p class='muted'>The panel bundle (webview/dist) is not built: the trace's figures only.</p>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(csp(nonce, frames=True))}">
<title>{e(path)} · PyPTO trace</title><style nonce="{nonce}">{_STYLE}
html,body{{height:100%;margin:0}}body{{display:flex;flex-direction:column}}#bar{{padding:6px 12px}}
iframe{{flex:1;border:0;width:100%}}</style></head><body>
<div id="bar"><a href="/">← kernels and traces</a> · <code>{e(path)}</code>
<span id="state" class="muted">loading…</span> · <a href="{e(src)}">swimlane JSON</a></div>
<script nonce="{nonce}">
const src = {json.dumps(src)};
const state = document.getElementById("state");
let ready = false, trace = null;
function send() {{
  const frame = document.getElementById("panel");
  if (!ready || !trace || !frame) return;
  frame.contentWindow.postMessage({{v: 1, type: "swimlane", run: trace.run, label: trace.label}}, location.origin);
}}
window.addEventListener("message", ev => {{
  const frame = document.getElementById("panel");
  if (!frame || ev.source !== frame.contentWindow || ev.origin !== location.origin) return;
  if (ev.data && ev.data.type === "ready") {{ ready = true; send(); }}
}});
fetch(src, {{credentials: "same-origin"}}).then(async r => {{
  const d = await r.json();
  if (!r.ok) throw new Error(typeof d.detail === "string" ? d.detail : `HTTP ${{r.status}}`);
  trace = d;
  const m = d.run.metrics || {{}}, dropped = (d.run.info || {{}}).dropped || [],
    ignored = (d.run.info || {{}}).ignored || [];
  state.textContent = `${{d.run.tasks.id.length}} tasks on ${{d.run.lanes.length}} lanes · makespan ` +
    `${{(m.makespan_us || 0).toFixed(2)}} µs` + (dropped.length ? ` · not placed: ${{dropped.join("; ")}}` : "") +
    (ignored.length ? ` · not followed: ${{ignored.join("; ")}}` : "");
  send();
}}).catch(err => {{ state.textContent = err.message; state.className = "err"; }});
</script>
{frame}
</body></html>
"""


def trace_panel_page(nonce: str, base: str) -> str:
    """The swimlane panel as a frame of the trace view: the bundle's swimlane.js with the `parent` host
    (messages from and to the page that frames it, same origin only)."""
    e = html.escape
    policy = ("default-src 'none'; " f"script-src 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
              "img-src 'self' data:; font-src 'self'; connect-src 'none'; base-uri 'none'")
    return f"""<!DOCTYPE html>
<html lang="en" data-host="parent">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(policy)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>PyPTO Swimlane</title>
<link rel="stylesheet" href="{e(base)}panel.css">
</head>
<body>
<script nonce="{nonce}" src="{e(base)}swimlane.js"></script>
</body>
</html>
"""
