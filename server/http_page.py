"""The page `pypto-ide serve` shows at `/` until the webview bundle (webview/dist) is built.

Deliberately small: the kernels of the workspace with links to their JSON, a button that
profiles one, the result's slowest tasks, and a source view — clicking a task shows the
lines it runs. It uses only the public API (`/api/v1`) and the WebSocket, so it is also a
worked example for the browser host of the real panels. No external scripts or styles.
"""

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
