// The movement viewer: plain canvas (rasters) under SVG (lines and markers), talking
// to the server's JSON API. No build step, no dependencies.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const ROUTE = "#d0103a";
const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];

const state = {
  maps: [], rules: [], upload: null, terrain: null, ground: null, groundBits: null,
  unit: null, dest: null, enemies: [], reach: null, reachCost: null, route: null,
  threat: null, threatCount: null, flow: null, seen: null, scale: 1, seq: {},
};

// ---- talking to the server ----------------------------------------------------------

async function ask(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

// Ask, and keep only the latest answer of each kind (a slow old one never overwrites).
async function latest(kind, path, body) {
  const n = (state.seq[kind] = (state.seq[kind] || 0) + 1);
  busy(+1);
  try {
    const data = await ask(path, body);
    return n === state.seq[kind] ? data : undefined;
  } catch (err) {
    if (n === state.seq[kind]) say(err.message, true);
    return undefined;
  } finally {
    busy(-1);
  }
}

let pending = 0;
function busy(d) {
  pending += d;
  document.body.dataset.busy = pending > 0 ? "yes" : "no";
}

function say(text, error = false) {
  const s = $("status");
  s.textContent = text;
  s.className = error ? "error" : "";
}

function mapSource() {
  return state.upload || $("map").value;
}

function unitBody() {
  const body = { map: mapSource(), rules: $("rules").value, race: $("race").value };
  const ranks = parseInt($("ranks").value, 10);
  if (ranks >= 1) body.ranks = ranks;
  const move = parseFloat($("move").value);
  if (Number.isFinite(move)) body.move = move;
  if ($("march").checked) body.march = true;
  return body;
}

// ---- grids ----------------------------------------------------------------------------

function decode(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function cells() {
  const [rows, cols] = state.terrain.shape;
  return { rows, cols, n: rows * cols, cell: state.terrain.cell };
}

// A canvas of one pixel per cell, painted by paint(index) -> [r, g, b, a] or null.
function raster(paint) {
  const { rows, cols, n } = cells();
  const off = document.createElement("canvas");
  off.width = cols;
  off.height = rows;
  const ctx = off.getContext("2d");
  const img = ctx.createImageData(cols, rows);
  for (let i = 0; i < n; i++) {
    const c = paint(i);
    if (c) img.data.set(c, 4 * i);
  }
  ctx.putImageData(img, 0, 0);
  return off;
}

function viridis(t) {
  const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const f = x - i;
  return VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
}

// ---- drawing ----------------------------------------------------------------------------

function sizeBoard() {
  const t = state.terrain;
  const room = Math.max(400, Math.min(1100, window.innerWidth - 460));
  state.scale = room / t.width;
  const w = Math.round(t.width * state.scale);
  const h = Math.round(t.height * state.scale);
  const dpr = window.devicePixelRatio || 1;
  const canvas = $("canvas");
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const svg = $("overlay");
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("viewBox", `0 0 ${t.width} ${t.height}`);
}

function draw() {
  if (!state.terrain) return;
  const t = state.terrain;
  const canvas = $("canvas");
  const ctx = canvas.getContext("2d");
  ctx.setTransform(canvas.width / t.width, 0, 0, canvas.height / t.height, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(state.terrainImage, 0, 0, t.width, t.height);
  const layer = (img, alpha = 1) => {
    if (!img) return;
    ctx.globalAlpha = alpha;
    ctx.drawImage(img, 0, 0, t.width, t.height);
    ctx.globalAlpha = 1;
  };
  layer(state.blockedImage);
  if ($("show-sight").checked) layer(state.hiddenImage);
  if ($("show-threat").checked) layer(state.threatImage);
  if ($("show-reach").checked) layer(state.reachImage, 0.6);
  drawOverlay();
  document.getElementById("board").dataset.reach =
    state.reach && $("show-reach").checked ? "drawn" : "none";
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function drawOverlay() {
  const svg = $("overlay");
  svg.replaceChildren();
  const px = 1 / state.scale; // one screen pixel in table units
  const defs = el("defs", {}, svg);
  const head = el("marker", { id: "head", viewBox: "0 0 10 10", refX: 5, refY: 5,
    markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#111" }, head);
  if (state.reach && $("show-reach").checked) {
    el("path", { d: edgePath(), class: "edge", fill: "none", stroke: "#000",
      "stroke-width": 1.6, "vector-effect": "non-scaling-stroke" }, svg);
  }
  if (state.flow && $("show-flow").checked) {
    const len = 0.3 * state.flow.spacing;
    const g = el("g", { class: "flow", stroke: "#111", "stroke-width": 1,
      "vector-effect": "non-scaling-stroke" }, svg);
    for (const [x, y, ux, uy] of state.flow.arrows) {
      el("line", { x1: x - ux * len, y1: y - uy * len, x2: x + ux * len, y2: y + uy * len,
        "marker-end": "url(#head)", "vector-effect": "non-scaling-stroke" }, g);
    }
  }
  if (state.route) drawRoute(svg, px);
  for (const [i, e] of state.enemies.entries()) {
    el("circle", { cx: e.at[0], cy: e.at[1], r: 7 * px, fill: "#fff", stroke: "#000",
      "stroke-width": 2, "vector-effect": "non-scaling-stroke", class: "enemy" }, svg);
    label(svg, e.at, `E${i + 1}`, px, "#000");
  }
  if (state.unit) {
    el("path", { d: star(state.unit, 11 * px), fill: "#fff", stroke: "#000",
      "stroke-width": 1.5, "vector-effect": "non-scaling-stroke", class: "unit" }, svg);
  }
}

function label(svg, [x, y], text, px, colour) {
  const t = el("text", { x, y: y + 3.5 * px, "font-size": 10 * px, "text-anchor": "middle",
    "font-weight": "bold", fill: colour }, svg);
  t.textContent = text;
}

function star([x, y], r) {
  const pts = [];
  for (let k = 0; k < 10; k++) {
    const a = -Math.PI / 2 + (k * Math.PI) / 5;
    const rr = k % 2 ? r * 0.45 : r;
    pts.push(`${x + rr * Math.cos(a)},${y + rr * Math.sin(a)}`);
  }
  return `M${pts.join("L")}z`;
}

function drawRoute(svg, px) {
  const pts = state.route.path.map(([x, y]) => `${x},${y}`).join(" ");
  el("polyline", { points: pts, fill: "none", stroke: "#fff", "stroke-width": 7,
    "stroke-linecap": "round", "stroke-linejoin": "round", "vector-effect": "non-scaling-stroke" }, svg);
  el("polyline", { points: pts, fill: "none", stroke: ROUTE, "stroke-width": 3.5, class: "route",
    "stroke-linecap": "round", "stroke-linejoin": "round", "vector-effect": "non-scaling-stroke" }, svg);
  for (const leg of state.route.legs) {
    if (leg.kind !== "move") {
      el("rect", { x: leg.from[0] - 4 * px, y: leg.from[1] - 4 * px, width: 8 * px, height: 8 * px,
        fill: "#fff", stroke: ROUTE, "stroke-width": 2, "vector-effect": "non-scaling-stroke",
        class: "leg-mark" }, svg).appendChild(title(`${leg.kind}: ${fmt(leg.cost)}`));
    }
  }
  for (const [i, at] of state.route.stops.entries()) {
    el("circle", { cx: at[0], cy: at[1], r: 8 * px, fill: "#fff", stroke: ROUTE,
      "stroke-width": 2, "vector-effect": "non-scaling-stroke", class: "stop" }, svg)
      .appendChild(title(`end of turn ${i + 1}`));
    label(svg, at, String(i + 1), px, "#000");
  }
  const [gx, gy] = state.route.path[state.route.path.length - 1];
  const d = 7 * px;
  el("path", { d: `M${gx},${gy - d}L${gx + d},${gy}L${gx},${gy + d}L${gx - d},${gy}z`,
    fill: "gold", stroke: "#000", "stroke-width": 1.5, "vector-effect": "non-scaling-stroke",
    class: "goal" }, svg);
}

function title(text) {
  const t = document.createElementNS(SVG, "title");
  t.textContent = text;
  return t;
}

// The edge of the reach: the sides of reachable cells that face unreachable ones.
function edgePath() {
  const { rows, cols, cell } = cells();
  const on = (r, c) => r >= 0 && c >= 0 && r < rows && c < cols && state.reachCost[r * cols + c] >= 0;
  const d = [];
  for (const i of state.reach.cells) {
    const r = Math.floor(i / cols), c = i % cols;
    const x0 = c * cell, y0 = r * cell, x1 = x0 + cell, y1 = y0 + cell;
    if (!on(r - 1, c)) d.push(`M${x0},${y0}H${x1}`);
    if (!on(r + 1, c)) d.push(`M${x0},${y1}H${x1}`);
    if (!on(r, c - 1)) d.push(`M${x0},${y0}V${y1}`);
    if (!on(r, c + 1)) d.push(`M${x1},${y0}V${y1}`);
  }
  return d.join("");
}

function fmt(v, digits = 2) {
  return v === null || v === undefined ? "—" : `${Number(v).toFixed(digits)}`;
}

// ---- the answers ------------------------------------------------------------------------

async function loadTerrain() {
  const t = await latest("terrain", "/v1/terrain", { map: mapSource(), rules: $("rules").value });
  if (!t) return;
  const img = new Image();
  img.src = t.image;
  await img.decode();
  state.terrain = t;
  state.terrainImage = img;
  clearTable();
  sizeBoard();
  legend();
  await loadGround();
  say(`${t.width} × ${t.height} ${t.units}. Click to place your unit.`);
  document.body.dataset.ready = "yes";
}

async function loadGround() {
  const g = await latest("ground", "/v1/fields/ground", unitBody());
  if (!g) return;
  const raw = decode(g.ground);
  state.ground = g;
  state.groundIndex = new Uint16Array(raw.buffer, 0, raw.length / 2);
  state.blockedImage = raster((i) => (g.kinds[state.groundIndex[i]].multiplier === null
    ? [20, 20, 20, 110] : null));
  draw();
}

async function refreshUnit() {
  await Promise.all([loadGround(), refreshReach(), refreshRoute(), refreshFlow(), refreshSight()]);
}

async function refreshReach() {
  if (!state.unit) return;
  const r = await latest("reach", "/v1/fields/reach", { ...unitBody(), at: state.unit });
  if (!r) return;
  const { n } = cells();
  state.reach = r;
  state.reachCost = new Float32Array(n).fill(-1);
  r.cells.forEach((c, k) => { state.reachCost[c] = r.cost[k]; });
  const a = r.allowance || 1;
  state.reachImage = raster((i) => (state.reachCost[i] >= 0
    ? [...viridis((a - state.reachCost[i]) / a), 255] : null));
  summary();
  draw();
}

async function refreshRoute() {
  if (!state.unit || !state.dest) return;
  const r = await latest("route", "/v1/route", { ...unitBody(), from: state.unit, to: state.dest });
  state.route = r || null;
  if (r) say(`Route: ${fmt(r.cost)} over ${fmt(r.length)} ${state.terrain.units}, ${r.turns} turn${r.turns === 1 ? "" : "s"}.`);
  summary();
  legs();
  draw();
}

async function refreshFlow() {
  if (!state.dest || !$("show-flow").checked) return;
  const f = await latest("flow", "/v1/fields/flow", { ...unitBody(), goals: [state.dest] });
  if (f) { state.flow = f; draw(); }
}

async function refreshSight() {
  if (!state.unit || !$("show-sight").checked) return;
  const s = await latest("sight", "/v1/fields/visible",
    { map: mapSource(), rules: $("rules").value, from: state.unit });
  if (!s) return;
  const bits = decode(s.seen);
  state.seen = (i) => (bits[i >> 3] >> (7 - (i & 7))) & 1;
  state.hiddenImage = raster((i) => (state.seen(i) ? null : [0, 0, 40, 120]));
  draw();
}

async function refreshThreat() {
  state.threat = null;
  state.threatImage = null;
  if (!state.enemies.length) { draw(); return; }
  const body = { map: mapSource(), rules: $("rules").value, enemies: state.enemies };
  const t = await latest("threat", "/v1/fields/threat", body);
  if (!t) return;
  const { n } = cells();
  state.threat = t;
  state.threatCount = new Uint8Array(n);
  t.cells.forEach((c, k) => { state.threatCount[c] = t.count[k]; });
  state.threatImage = raster((i) => (state.threatCount[i]
    ? [200, 16, 30, Math.round(60 + 120 * state.threatCount[i] / Math.max(t.most, 1))] : null));
  summary();
  draw();
}

function summary() {
  const u = state.terrain ? state.terrain.units : "";
  const parts = [];
  if (state.reach) {
    const area = state.reach.cells.length * state.reach.cell ** 2;
    parts.push(`<p><b>${$("race").value}</b> at (${fmt(state.unit[0], 1)}, ${fmt(state.unit[1], 1)}): move ${fmt(state.reach.allowance, 1)} ${u}, ${fmt(area, 0)} ${u}² within reach this turn.</p>`);
  }
  if (state.route) {
    const r = state.route;
    parts.push(`<p><b>Route</b> to (${fmt(state.dest[0], 1)}, ${fmt(state.dest[1], 1)}): costs ${fmt(r.cost)} ${u} over ${fmt(r.length)} ${u}, <b>${r.turns} turn${r.turns === 1 ? "" : "s"}</b>.</p>`);
  }
  if (state.threat) {
    parts.push(`<p><b>Threat</b>: ${state.enemies.length} enem${state.enemies.length === 1 ? "y" : "ies"}, up to ${state.threat.most} reaching one place.</p>`);
  }
  $("summary").innerHTML = parts.join("");
}

function legs() {
  const table = $("legs");
  const body = table.querySelector("tbody");
  body.replaceChildren();
  table.hidden = !state.route;
  if (!state.route) return;
  const move = state.reach ? state.reach.allowance : null;
  let spent = 0;
  state.route.legs.forEach((leg, i) => {
    const before = spent;
    spent += leg.cost;
    const tr = document.createElement("tr");
    const cellsOf = [i + 1, leg.kind, fmt(leg.length), leg.kind === "move" ? `×${leg.multiplier}` : "",
      fmt(leg.cost), fmt(spent), leg.terrain.join(", ")];
    for (const v of cellsOf) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    if (move && Math.floor(spent / move + 1e-9) > Math.floor(before / move + 1e-9)) tr.className = "turn-end";
    body.appendChild(tr);
  });
}

function legend() {
  const box = $("legend");
  box.replaceChildren();
  const item = (html) => {
    const s = document.createElement("span");
    s.innerHTML = html;
    box.appendChild(s);
  };
  for (const { terrain, colour } of state.terrain.legend) item(`<i style="background:${colour}"></i>${terrain}`);
  const ramp = VIRIDIS.map((c) => `rgb(${c})`).join(",");
  item(`<i style="background:#333;opacity:.6"></i>impassable for your unit`);
  item(`<i class="ramp" style="background:linear-gradient(90deg,${ramp})"></i>move left: none → all`);
  item(`<i class="line" style="border-color:#000"></i>edge of reach`);
  item(`<i class="line" style="border-color:${ROUTE};border-width:3px 0 0"></i>route; ① end of turn 1…`);
  item(`<i style="background:rgba(200,16,30,.6)"></i>enemies can reach (darker: more)`);
  item(`<i style="background:rgba(0,0,40,.5)"></i>out of your unit's sight`);
}

// ---- the pointer ----------------------------------------------------------------------

function world(ev) {
  const svg = $("overlay");
  const p = svg.createSVGPoint();
  p.x = ev.clientX;
  p.y = ev.clientY;
  const q = p.matrixTransform(svg.getScreenCTM().inverse());
  return [Math.round(q.x * 100) / 100, Math.round(q.y * 100) / 100];
}

function cellAt([x, y]) {
  const { rows, cols, cell } = cells();
  const r = Math.floor(y / cell), c = Math.floor(x / cell);
  return r >= 0 && c >= 0 && r < rows && c < cols ? r * cols + c : -1;
}

async function click(ev) {
  if (!state.terrain) return;
  const at = world(ev);
  if (ev.shiftKey) {
    const near = state.enemies.findIndex((e) => Math.hypot(e.at[0] - at[0], e.at[1] - at[1]) < 8 / state.scale);
    if (near >= 0) state.enemies.splice(near, 1);
    else state.enemies.push({ race: $("enemy-race").value, at });
    draw();
    await refreshThreat();
    return;
  }
  if (!state.unit || ev.altKey) {
    state.unit = at;
    state.seen = null;
    state.hiddenImage = null;
    draw();
    await Promise.all([refreshReach(), refreshRoute(), refreshSight()]);
    return;
  }
  state.dest = at;
  state.flow = null;
  draw();
  await Promise.all([refreshRoute(), refreshFlow()]);
}

function hover(ev) {
  const tip = $("tip");
  if (!state.ground) return;
  const at = world(ev);
  const i = cellAt(at);
  if (i < 0) { tip.hidden = true; return; }
  const u = state.terrain.units;
  const kind = state.ground.kinds[state.groundIndex[i]];
  const lines = [`(${fmt(at[0], 1)}, ${fmt(at[1], 1)}) ${kind.terrain.join(", ")}: ${kind.multiplier === null ? "impassable" : `×${kind.multiplier}`}`];
  if (state.reach) {
    const c = state.reachCost[i];
    lines.push(c >= 0 ? `reach costs ${fmt(c)} ${u}, ${fmt(state.reach.allowance - c)} left` : "out of reach this turn");
  }
  if (state.threat) lines.push(`${state.threatCount[i]} enem${state.threatCount[i] === 1 ? "y" : "ies"} can reach it`);
  if (state.seen && $("show-sight").checked) lines.push(state.seen(i) ? "in sight" : "out of sight");
  tip.innerHTML = lines.join("<br>");
  tip.hidden = false;
  const box = $("board").getBoundingClientRect();
  const x = ev.clientX - box.left, y = ev.clientY - box.top;
  // Beside the pointer, on the side of the board with room for it.
  tip.style.left = `${x + 14 + tip.offsetWidth > box.width ? x - 14 - tip.offsetWidth : x + 14}px`;
  tip.style.top = `${y + 14 + tip.offsetHeight > box.height ? y - 14 - tip.offsetHeight : y + 14}px`;
}

// ---- controls -------------------------------------------------------------------------

function clearTable() {
  Object.assign(state, { unit: null, dest: null, enemies: [], reach: null, reachCost: null,
    reachImage: null, route: null, threat: null, threatImage: null, flow: null, seen: null,
    hiddenImage: null });
  $("summary").replaceChildren();
  legs();
  draw();
}

function fillRaces() {
  const rules = state.rules.find((r) => r.name === $("rules").value);
  for (const id of ["race", "enemy-race"]) {
    const sel = $(id);
    const keep = sel.value;
    sel.replaceChildren(...rules.races.map((r) => new Option(`${r.race} (move ${r.move})`, r.race)));
    if (rules.races.some((r) => r.race === keep)) sel.value = keep;
  }
  if (!$("enemy-race").dataset.touched && rules.races.length > 1) {
    const orcs = rules.races.find((r) => r.race === "orcs");
    $("enemy-race").value = orcs ? orcs.race : rules.races[1].race;
  }
}

async function init() {
  document.body.dataset.ready = "no";
  const [maps, rules] = await Promise.all([ask("/v1/maps"), ask("/v1/rules")]);
  state.maps = maps.maps.filter((m) => !m.error);
  state.rules = rules.rules;
  $("map").replaceChildren(...state.maps.map((m) => new Option(`${m.name} (${m.width} × ${m.height} ${m.units})`, m.name)));
  $("rules").replaceChildren(...state.rules.map((r) => new Option(r.title, r.name)));
  if (state.maps.some((m) => m.name === "demo")) $("map").value = "demo";
  if (state.rules.some((r) => r.name === "fantasy-warlord")) $("rules").value = "fantasy-warlord";
  fillRaces();
  if (state.rules.length && $("race").querySelector("option[value=humans]")) $("race").value = "humans";

  $("map").addEventListener("change", () => { state.upload = null; $("map-file").value = ""; loadTerrain(); });
  $("map-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    try {
      state.upload = JSON.parse(await file.text());
    } catch (err) {
      say(`${file.name}: not JSON (${err.message})`, true);
      return;
    }
    loadTerrain();
  });
  $("rules").addEventListener("change", () => { fillRaces(); loadTerrain(); });
  for (const id of ["race", "ranks", "move", "march"]) $(id).addEventListener("change", refreshUnit);
  $("enemy-race").addEventListener("change", () => { $("enemy-race").dataset.touched = "yes"; });
  $("show-reach").addEventListener("change", draw);
  $("show-threat").addEventListener("change", draw);
  $("show-flow").addEventListener("change", () => { draw(); refreshFlow(); });
  $("show-sight").addEventListener("change", () => { draw(); refreshSight(); });
  $("clear").addEventListener("click", clearTable);
  const svg = $("overlay");
  svg.addEventListener("click", click);
  svg.addEventListener("mousemove", hover);
  svg.addEventListener("mouseleave", () => { $("tip").hidden = true; });
  window.addEventListener("resize", () => { if (state.terrain) { sizeBoard(); draw(); } });
  await loadTerrain();
}

window.viewer = { state, ready: init().catch((err) => say(err.message, true)) };
