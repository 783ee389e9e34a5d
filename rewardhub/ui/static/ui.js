// The operator page: polls /ui/api/stats and /ui/api/samples once a second and redraws.
// Every value from the service is put in the page as text (textContent), never as HTML:
// sample text is untrusted.
"use strict";

const POLL_MS = 1000;
const STATUSES = ["ok", "timeout", "error"];
const FIGURE_COLUMNS = ["name", "samples", "samples/s", "p50 ms", "p99 ms", "ok", "timeout", "error",
  "mean reward", "rewards (recent)", "most frequent errors"];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
  }
  return node;
}

function fixed(value, digits) {
  return value == null ? "–" : Number(value).toFixed(digits);
}

function millis(value) {
  return value == null ? "–" : Number(value).toFixed(value < 1 ? 3 : 1);
}

function histogramSvg(hist) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  const width = 120, height = 28, top = Math.max(1, ...hist.counts);
  svg.setAttribute("class", "hist");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const bar = width / hist.counts.length;
  hist.counts.forEach((count, i) => {
    const rect = document.createElementNS(ns, "rect");
    const h = count ? Math.max(1, (count / top) * height) : 0;
    rect.setAttribute("x", i * bar);
    rect.setAttribute("y", height - h);
    rect.setAttribute("width", Math.max(1, bar - 1));
    rect.setAttribute("height", h);
    const title = document.createElementNS(ns, "title");
    const lo = hist.lo + (i * (hist.hi - hist.lo)) / hist.counts.length;
    const hi = hist.lo + ((i + 1) * (hist.hi - hist.lo)) / hist.counts.length;
    title.textContent = `[${lo.toFixed(2)}, ${hi.toFixed(2)}): ${count}`;
    rect.append(title);
    svg.append(rect);
  });
  svg.setAttribute("data-total", hist.counts.reduce((a, b) => a + b, 0));
  return svg;
}

function figureRow(kind, name, f) {
  const errors = el("td", { class: "errors" });
  for (const e of f.top_errors) errors.append(el("div", {}, `${e.count}× ${e.message}`));
  const row = el("tr", { "data-name": name },
    el("td", {}, name),
    el("td", { class: "num samples" }, f.samples),
    el("td", { class: "num rate" }, fixed(f.samples_per_s, 1)),
    el("td", { class: "num p50" }, millis(f.latency_ms.p50)),
    el("td", { class: "num p99" }, millis(f.latency_ms.p99)),
    ...STATUSES.map((s) => el("td", { class: `num ${s} status-${s}` }, f.status[s])),
    el("td", { class: "num mean" }, fixed(f.reward_mean, 3)),
    el("td", { class: "hist" }, histogramSvg(f.reward_histogram)),
    errors);
  row.dataset.kind = kind;
  return row;
}

function fillFigures(tableId, kind, figures) {
  const table = document.getElementById(tableId);
  if (!table.tHead.rows.length) table.tHead.append(el("tr", {}, ...FIGURE_COLUMNS.map((c) => el("th", {}, c))));
  const names = Object.keys(figures);
  const rows = names.length
    ? names.map((name) => figureRow(kind, name, figures[name]))
    : [el("tr", {}, el("td", { colspan: FIGURE_COLUMNS.length, class: "muted" }, "nothing scored yet"))];
  table.tBodies[0].replaceChildren(...rows);
}

function fillWorkers(workers) {
  const section = document.getElementById("workers-section");
  section.hidden = !workers;
  if (!workers) return;
  document.getElementById("workers-summary").textContent = workers.error
    ? `workers did not answer: ${workers.error}`
    : `${workers.workers} workers, ${workers.processes} processes, ${workers.tasks} tasks run`;
  const rows = workers.each.map((w) => el("tr", {}, el("td", {}, w.hostname), el("td", {}, w.pid),
    el("td", { class: "num" }, w.processes), el("td", { class: "num" }, w.tasks), el("td", { class: "num" }, w.uptime_s)));
  document.querySelector("#workers tbody").replaceChildren(...rows);
}

// The cache's cells are fixed (one row), so they are updated in place, not rebuilt.
function fillCache(cache) {
  const section = document.getElementById("cache-section");
  section.hidden = !cache;
  if (!cache) return;
  const set = (id, value) => { document.getElementById(id).textContent = value; };
  set("cache-backends", `(${cache.backends.join(", ")}; at most ${cache.max_entries} entries, each kept up to ${cache.ttl_s} s)`);
  set("cache-hit-rate", cache.hit_rate == null ? "–" : `${(100 * cache.hit_rate).toFixed(1)}%`);
  set("cache-lookups", cache.lookups);
  set("cache-hits", cache.hits);
  set("cache-misses", cache.misses);
  set("cache-corrupt", cache.corrupt);
  set("cache-entries", cache.entries == null ? "unknown (backend down)" : `${cache.entries} / ${cache.max_entries}`);
  set("cache-evicted-size", cache.evictions.size);
  set("cache-evicted-ttl", cache.evictions.ttl);
  set("cache-stores", cache.stores);
  set("cache-errors", cache.errors);
}

function fillSessions(sessions) {
  const section = document.getElementById("sessions-section");
  section.hidden = !sessions;
  if (!sessions) return;
  document.getElementById("sessions-summary").textContent =
    `${sessions.live} live in this service, ${sessions.created} created since it started`;
  const rows = Object.entries(sessions.by_key).flatMap(([key, list]) => list.map((s) => el("tr", {},
    el("td", {}, key), el("td", {}, s.id), el("td", {}, s.runtime), el("td", { class: "num" }, s.age_s),
    el("td", { class: "num" }, s.idle_s), el("td", { class: "num" }, s.calls), el("td", { class: "num" }, s.expires_in_s))));
  document.querySelector("#sessions tbody").replaceChildren(...rows);
}

function sampleRow(s) {
  const components = s.components
    ? Object.entries(s.components).map(([k, v]) => `${k}=${fixed(v, 3)}`).join(" ")
    : "";
  const link = el("a", { href: s.json_url, target: "_blank", rel: "noopener", class: "json" }, "JSON");
  const row = el("tr", { "data-key": s.key },
    el("td", {}, new Date(s.ts * 1000).toLocaleTimeString()),
    el("td", { class: "text" }, s.id),
    el("td", {}, s.verifier),
    el("td", {}, s.run),
    el("td", { class: `status status-${s.status}` }, s.status),
    el("td", { class: "num score" }, fixed(s.score, 3)),
    el("td", { class: "text answer" }, s.answer),
    el("td", { class: "text" }, s.error || s.reason),
    el("td", { class: "text" }, components),
    el("td", { class: "num" }, millis(s.elapsed_ms)),
    el("td", {}, link));
  if (s.response != null) row.title = s.response;
  return row;
}

function authHeaders() {
  return { Accept: "application/json" };
}

async function getJson(url) {
  const answer = await fetch(url, { headers: authHeaders(), credentials: "same-origin", cache: "no-store" });
  if (!answer.ok) throw new Error(`${url}: HTTP ${answer.status}`);
  return answer.json();
}

async function refresh() {
  const params = new URLSearchParams({ limit: "100" });
  const q = document.getElementById("search").value.trim();
  const status = document.getElementById("status-filter").value;
  if (q) params.set("q", q);
  if (status) params.set("status", status);
  const [stats, samples] = await Promise.all([getJson("/ui/api/stats"), getJson(`/ui/api/samples?${params}`)]);
  document.getElementById("summary").textContent =
    `${stats.total} samples scored · ${stats.processes} API processes · ${stats.execution}` +
    (stats.show_samples ? "" : " · sample text hidden");
  document.getElementById("summary").dataset.total = stats.total;
  fillFigures("verifiers", "verifier", stats.verifiers);
  fillFigures("runs", "run", stats.runs);
  fillCache(stats.cache);
  fillWorkers(stats.workers);
  fillSessions(stats.sessions);
  document.querySelector("#samples tbody").replaceChildren(...samples.samples.map(sampleRow));
  document.getElementById("samples-count").textContent = `${samples.samples.length} shown of ${samples.kept} kept`;
  const updated = document.getElementById("updated");
  updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
  updated.dataset.polls = String(Number(updated.dataset.polls || 0) + 1);
}

async function loop() {
  const problem = document.getElementById("problem");
  try {
    await refresh();
    problem.hidden = true;
  } catch (err) {
    problem.hidden = false;
    problem.textContent = String(err.message || err);
  }
  setTimeout(loop, POLL_MS);
}

document.getElementById("search").addEventListener("input", () => refresh().catch(() => {}));
document.getElementById("status-filter").addEventListener("change", () => refresh().catch(() => {}));
loop();
