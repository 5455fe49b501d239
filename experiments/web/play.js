// The play page of `pipslab serve`: a form to start a game, then the table or board drawn
// as SVG from the person's own view (the server sends nothing else), the legal moves as
// buttons, the log and the result, then the review of the person's own decisions.
// <body data-status data-moves data-game data-review> tell a test (or a person's script)
// where the game and its review stand.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let catalogue = [];
let current = null;       // the last game state from the server
let busy = false;

function el(tag, attrs, parent, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// ------------------------------------------------------------------ the form
function gameInfo() { return catalogue.find((g) => g.name === $("game").value); }

function optionValue(o) {
  const input = $("opt-" + o.name);
  if (!input) return undefined;
  if (o.type === "bool") return input.checked;
  if (o.type === "int") return parseInt(input.value, 10);
  if (o.type === "float") return parseFloat(input.value);
  return input.value;
}

function seatsWanted(g) {
  const players = g.options.find((o) => o.name === "players");
  return players ? optionValue(players) : (g.players || 2);
}

function buildOptions() {
  const g = gameInfo();
  const box = $("options");
  box.textContent = "";
  for (const o of g.options) {
    const label = html("label", {title: o.help || o.name}, box, o.name + " ");
    let input;
    if (o.type === "bool") {
      input = html("input", {type: "checkbox"}, label);
      input.checked = !!o.default;
    } else if (o.choices) {
      input = html("select", {}, label);
      for (const c of o.choices) html("option", {value: c}, input, String(c));
      input.value = o.default;
    } else {
      input = html("input", {type: o.type === "str" ? "text" : "number"}, label);
      if (o.low !== null) input.min = o.low;
      if (o.high !== null) input.max = o.high;
      input.value = o.default === null ? "" : o.default;
      if (o.default === null) input.placeholder = "default";
    }
    input.id = "opt-" + o.name;
    input.addEventListener("change", buildSeats);
  }
  const list = $("agent-list");
  list.textContent = "";
  for (const a of g.agents) html("option", {value: a}, list);
  buildSeats();
}

function buildSeats() {
  const g = gameInfo();
  const box = $("seats");
  // a change of options keeps the seats' agents; a change of game starts them afresh
  const old = box.dataset.game === g.name ? [...box.querySelectorAll("input")].map((i) => i.value) : [];
  box.dataset.game = g.name;
  box.textContent = "";
  const opponent = g.family === "backgammon" ? "pubeval" : (g.agents.includes("heaviest") ? "heaviest" : "random");
  const n = seatsWanted(g);
  for (let s = 0; s < n; s++) {
    const label = html("label", {}, box, "seat " + s + " ");
    const input = html("input", {type: "text", list: "agent-list", class: "agent", id: "seat-" + s}, label);
    input.value = old[s] || (s === 0 ? "human" : opponent);
  }
}

async function newGame(event) {
  event.preventDefault();
  if (busy) return;
  const g = gameInfo();
  const options = {};
  for (const o of g.options) options[o.name] = optionValue(o);
  const agents = [...$("seats").querySelectorAll("input")].map((i) => i.value.trim());
  const seed = parseInt($("seed").value, 10);
  busy = true;
  showError("");
  try {
    render(await api("POST", "/api/games", {game: g.name, options, agents, seed: isNaN(seed) ? 0 : seed}));
  } catch (err) {
    showError(err.message);
  } finally {
    busy = false;
  }
}

// ------------------------------------------------------------------ a move
async function play(action) {
  if (busy || !current || current.status !== "your-turn") return;
  busy = true;
  for (const b of $("moves").querySelectorAll("button")) b.disabled = true;
  document.body.dataset.status = "sending";
  showError("");
  try {
    render(await api("POST", "/api/games/" + current.id + "/move", {action}));
  } catch (err) {
    showError(err.message);
    render(current);
  } finally {
    busy = false;
  }
}

function reviewing(state) {
  return state.status === "over" && !!state.review && state.review.status === "running";
}

// a game over whose review runs: only the review box is drawn again (the rest stays put)
async function pollReview() {
  if (!current || !reviewing(current)) return;
  const id = current.id;
  try {
    const state = await api("GET", "/api/games/" + id);
    if (!current || current.id !== id) return;    // a new game meanwhile
    current.review = state.review;
    drawReview(current);
    document.body.dataset.review = current.review ? current.review.status : "";
    if (reviewing(current)) setTimeout(pollReview, 500);
  } catch (err) {
    showError(err.message);
  }
}

async function poll() {
  if (!current || current.status !== "waiting") return;
  try {
    render(await api("GET", "/api/games/" + current.id));
  } catch (err) {
    showError(err.message);
  }
}

// hints: a click on a tile or a point that has one legal move plays it; with several,
// their buttons light up
function choose(moves) {
  if (moves.length === 1) { play(moves[0].action); return; }
  const wanted = new Set(moves.map((m) => String(m.action)));
  for (const b of $("moves").querySelectorAll("button")) b.classList.toggle("hint", wanted.has(b.dataset.action));
}

// ------------------------------------------------------------------ the page from a state
function seatLabel(state, s) {
  return "seat " + s + " (" + state.agents[s] + (s === state.human ? ", you" : "") + ")";
}

function render(state) {
  current = state;
  $("game-area").hidden = false;
  document.body.dataset.game = state.id;
  document.body.dataset.moves = state.moves;
  const status = $("status");
  if (state.status === "your-turn") status.textContent = state.label + ", seed " + state.seed + ": your move";
  else if (state.status === "waiting") status.textContent = state.label + ": the other seats are playing…";
  else if (state.status === "over") status.textContent = state.label + ", seed " + state.seed + ": game over";
  else status.textContent = state.error || "error";
  if (state.error) showError(state.error);

  const board = $("board");
  board.textContent = "";
  if (state.view && state.view.kind === "dominoes") drawDominoes(board, state);
  else if (state.view && state.view.kind === "backgammon") drawBackgammon(board, state);
  else if (state.view) html("pre", {}, board, state.view.text);

  const moves = $("moves");
  moves.textContent = "";
  for (const m of state.legal) {
    const b = html("button", {type: "button", "data-action": m.action}, moves, m.name);
    b.addEventListener("click", () => play(m.action));
  }

  const log = $("log");
  log.textContent = "";
  for (const e of state.log) {
    const text = seatLabel(state, e.seat) + ": " + (e.roll ? "rolls " + e.roll.join("-") + ", " : "") + e.move;
    html("li", {class: e.seat === state.human ? "you" : ""}, log, text);
  }
  log.scrollTop = log.scrollHeight;

  drawResult(state);
  drawReview(state);
  document.body.dataset.status = state.status;
  document.body.dataset.review = state.review ? state.review.status : "";
  if (state.status === "waiting") setTimeout(poll, 300);
  else if (reviewing(state)) setTimeout(pollReview, 500);
}

function drawResult(state) {
  const box = $("result");
  box.textContent = "";
  box.hidden = !state.result;
  if (!state.result) return;
  const r = state.result;
  html("h2", {id: "result-text"}, box, (r.you === "you win" ? "You win! " : r.you === "you lose" ? "You lose. " : "")
       + r.text.charAt(0).toUpperCase() + r.text.slice(1) + ".");
  const table = html("table", {id: "result-table"}, box);
  const head = html("tr", {}, table);
  const cols = [["seat", "seat"], ["agent", "agent"], ["returns", "return"], ["points", "points"], ["pips_left", "pips left"]];
  if (r.hands) cols.push(["hands", "tiles left"]);
  for (const [, name] of cols) html("th", {}, head, name);
  r.returns.forEach((_, s) => {
    const row = html("tr", {"data-seat": s}, table);
    for (const [key] of cols) {
      let value = key === "seat" ? s : key === "agent" ? state.agents[s] + (s === state.human ? " (you)" : "")
        : r[key] === null || r[key] === undefined ? "–" : r[key][s];
      if (key === "hands") value = value.length ? value.join(" ") : "(none)";
      html("td", {"data-field": key}, row, String(value));
    }
  });
  const extra = Object.entries(r.extra).map(([k, v]) => k + " " + v).join(", ");
  if (extra) html("p", {}, box, extra);
}

// ------------------------------------------------------------------ the review
function fixed(x, digits) { return x === null || x === undefined ? "–" : x.toFixed(digits); }

function drawReview(state) {
  const box = $("review");
  const r = state.review;
  box.textContent = "";
  box.hidden = !r;
  if (!r) return;
  box.dataset.status = r.status;
  const text = html("p", {id: "review-text"}, box);
  if (r.status === "running") {
    text.textContent = "reviewing your moves…" + (r.progress ? " (" + r.progress[0] + " of " + r.progress[1] + ")" : "");
    return;
  }
  if (r.status === "unavailable") { text.textContent = "No review of this game: " + r.reason; return; }
  if (r.status === "error") { text.textContent = "The review failed: " + r.reason; return; }
  text.textContent = "Your review: " + r.decisions + " decision" + (r.decisions === 1 ? "" : "s") + ", error rate "
    + fixed(r.error_rate, 1) + " [" + fixed(r.error_rate_low, 1) + ", " + fixed(r.error_rate_high, 1) + "] per 1000, "
    + r.blunders + " blunder" + (r.blunders === 1 ? "" : "s") + " (threshold " + r.blunder_threshold + "), reference "
    + r.reference;
  html("p", {class: "note"}, box, "Reference: " + r.reference_label + ". Loss: the best move's value minus yours, in "
       + r.unit + "; error rate: mean loss per decision with a choice ×1000 (95% bootstrap interval over your "
       + "decisions); forced moves (" + r.forced + ") not counted.");
  if (!r.worst.length) {
    html("p", {id: "review-none"}, box, r.decisions ? "No move lost anything: each was as good as the best." : "");
    return;
  }
  html("h3", {}, box, "your worst moves");
  const table = html("table", {id: "review-table"}, box);
  const head = html("tr", {}, table);
  for (const name of ["move", "position", "you played", "best", "loss"]) html("th", {}, head, name);
  for (const w of r.worst) {
    const row = html("tr", {"data-turn": w.turn, "data-loss": w.loss}, table);
    html("td", {"data-field": "move"}, row, w.move === null ? "–" : String(w.move));
    const where = html("td", {"data-field": "position"}, row);
    if (w.position_id) where.textContent = "Position ID " + w.position_id + ", rolled " + w.dice.join("-");
    else drawDecision(where, w);
    html("td", {"data-field": "played"}, row, w.played);
    html("td", {"data-field": "best"}, row, w.best);
    html("td", {"data-field": "loss"}, row, w.loss.toFixed(3));
  }
}

// a domino decision as the person saw it: the line and his hand, small
function drawDecision(parent, w) {
  const s = 12, gap = 2;
  const width = (tiles) => tiles.reduce((x, t) => x + (t[0] === t[2] ? s : 2 * s) + gap, 0);
  const W = Math.max(width(w.line), w.hand.length * (s + 4), 120) + 60;
  const svg = el("svg", {width: W, height: 4 * s + 16, class: "decision",
                         "aria-label": "line " + (w.line.join(" ") || "empty") + "; your hand " + w.hand.join(" ")}, parent);
  el("text", {x: 0, y: s + 3, "font-size": 10, fill: "#555"}, svg, "line");
  let x = 34;
  if (!w.line.length) el("text", {x, y: s + 3, "font-size": 10, fill: "#555"}, svg, "(empty)");
  for (const t of w.line) {
    const double = t[0] === t[2];
    tile(svg, x, double ? 0 : s / 2, t, {size: s, upright: double});
    x += (double ? s : 2 * s) + gap;
  }
  el("text", {x: 0, y: 3 * s + 8, "font-size": 10, fill: "#555"}, svg, "hand");
  x = 34;
  for (const t of w.hand) {
    tile(svg, x, 2 * s + 4, t, {size: s, upright: true});
    x += s + 4;
  }
  html("div", {class: "decision-text"}, parent, "line " + (w.line.join(" ") || "(empty)") + " | hand " + w.hand.join(" "));
}

// ------------------------------------------------------------------ dominoes
const PIP_SPOTS = {0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]], 4: [[0, 0], [0, 2], [2, 0], [2, 2]],
                   5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]], 6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]]};

function pips(g, x, y, size, n, color) {
  for (const [i, j] of PIP_SPOTS[n]) {
    el("circle", {cx: x + size * (0.22 + 0.28 * i), cy: y + size * (0.22 + 0.28 * j), r: size * 0.085, fill: color}, g);
  }
}

// a tile "a-b": a on the left (or top when upright); face down when name is null
function tile(parent, x, y, name, opts) {
  const o = opts || {};
  const s = o.size || 26;
  const upright = !!o.upright;
  const w = upright ? s : 2 * s, h = upright ? 2 * s : s;
  const g = el("g", {class: "tile" + (o.legal ? " clickable" : "")}, parent);
  el("rect", {x, y, width: w, height: h, rx: 4, fill: name ? "#fffdf6" : "#2f5d50",
              stroke: o.legal ? "#d4a000" : name ? "#333" : "#cfe3d8", "stroke-width": o.legal ? 3 : 1}, g);
  if (name) {
    const [a, b] = name.split("-").map(Number);
    if (upright) {
      el("line", {x1: x + 3, y1: y + s, x2: x + s - 3, y2: y + s, stroke: "#555"}, g);
      pips(g, x, y, s, a, "#222");
      pips(g, x, y + s, s, b, "#222");
    } else {
      el("line", {x1: x + s, y1: y + 3, x2: x + s, y2: y + s - 3, stroke: "#555"}, g);
      pips(g, x, y, s, a, "#222");
      pips(g, x + s, y, s, b, "#222");
    }
  }
  if (o.title) el("title", {}, g, o.title);
  return g;
}

function drawRow(svg, tiles, x0, y0, width, s, label) {
  // tiles laid left to right, doubles upright, wrapping at the width; returns the next y
  let x = x0, y = y0;
  if (label) { el("text", {x: x0, y: y0 - 4, "font-size": 12, fill: "#cfe3d8"}, svg, label); }
  for (const t of tiles) {
    const [a, b] = t.split("-");
    const double = a === b;
    const w = double ? s : 2 * s;
    if (x + w > x0 + width) { x = x0; y += 2 * s + 10; }
    tile(svg, x, double ? y : y + s / 2, t, {size: s, upright: double});
    x += w + 3;
  }
  return y + 2 * s + 14;
}

function drawDominoes(board, state) {
  const v = state.view;
  const W = 900, s = 22;
  const svg = el("svg", {viewBox: "0 0 " + W + " 100", width: W, id: "table-svg", "data-kind": "dominoes"}, board);
  el("rect", {x: 0, y: 0, width: W, height: "100%", fill: "#2e6b4f", rx: 10}, svg);
  let y = 22;
  // the other seats: face-down tiles
  for (let p = 0; p < v.hand_sizes.length; p++) {
    if (p === v.seat) continue;
    const turn = p === v.current_player && state.status !== "over" ? "  ← to play" : "";
    el("text", {x: 16, y: y + 14, "font-size": 13, fill: "#f3f1ea"}, svg, seatLabel(state, p) + ": " + v.hand_sizes[p] + " tiles" + turn);
    for (let i = 0; i < v.hand_sizes[p]; i++) tile(svg, 260 + i * 18, y, null, {size: 10, upright: true});
    y += 30;
  }
  el("text", {x: 16, y: y + 12, "font-size": 13, fill: "#f3f1ea"}, svg,
     "boneyard: " + v.boneyard + " tiles" + (v.draw_game ? "" : " (out of play)")
     + (v.ends[0] >= 0 ? "   open ends: " + v.ends.filter((e) => e >= 0).join(" | ") : "")
     + (v.match ? "   match to " + v.match.target + ", hand " + v.match.hand + ", scores " + v.match.scores.join(" / ") : "")
     + (v.winnings ? "   winnings " + v.winnings.join(" / ") + ", penalties " + v.penalties.join(" / ") : ""));
  y += 40;
  if (!v.line || v.line.length === 0) {
    el("text", {x: W / 2, y: y + 20, "font-size": 14, fill: "#cfe3d8", "text-anchor": "middle"}, svg,
       v.line ? "(the table is empty)" : "");
    y += 50;
  } else {
    y = drawRow(svg, v.line, 16, y + 4, W - 32, s, "the line, left to right");
  }
  if (v.arms) {
    v.arms.forEach((arm, k) => {
      if (arm.length) y = drawRow(svg, arm, 16, y + 14, W - 32, s, "side line " + (k + 1) + " (from the spinner outward)");
    });
  }
  // the person's hand
  y += 14;
  const mine = v.seat === v.current_player && state.status === "your-turn";
  el("text", {x: 16, y: y, "font-size": 14, fill: "#fff", "font-weight": "bold"}, svg,
     "your hand (seat " + v.seat + ")" + (mine ? ": your move" : ""));
  y += 10;
  const byTile = {};
  for (const m of state.legal) if (m.tile) (byTile[m.tile] = byTile[m.tile] || []).push(m);
  let x = 16;
  const hs = 30;
  for (const t of v.hand) {
    const moves = byTile[t] || [];
    const g = tile(svg, x, y, t, {size: hs, upright: true, legal: moves.length > 0,
                                  title: moves.length ? moves.map((m) => m.name).join(", ") : t});
    if (moves.length) g.addEventListener("click", () => choose(moves));
    x += hs + 8;
  }
  if (!v.hand.length) el("text", {x: 16, y: y + 20, "font-size": 13, fill: "#cfe3d8"}, svg, "(no tiles left)");
  y += 2 * hs + 16;
  if (state.result && state.result.hands) {
    const shown = state.result.hands.map((h, p) => seatLabel(state, p) + ": " + (h.length ? h.join(" ") : "out")).join("    ");
    el("text", {x: 16, y: y + 4, "font-size": 13, fill: "#ffe98a"}, svg, "hands turned up: " + shown);
    y += 20;
  }
  svg.setAttribute("viewBox", "0 0 " + W + " " + y);
  svg.setAttribute("height", y);
}

// ------------------------------------------------------------------ backgammon
function drawBackgammon(board, state) {
  const v = state.view;
  const W = 760, H = 420, M = 20, TRAY = 60, BAR = 40;
  const inner = W - 2 * M - TRAY;
  const pw = (inner - BAR) / 12;
  const svg = el("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, id: "board-svg", "data-kind": "backgammon"}, board);
  el("rect", {x: 0, y: 0, width: W, height: H, fill: "#6b4226", rx: 10}, svg);
  el("rect", {x: M, y: M, width: inner, height: H - 2 * M, fill: "#e8d8b0"}, svg);
  const barX = M + 6 * pw;
  el("rect", {x: barX, y: M, width: BAR, height: H - 2 * M, fill: "#6b4226"}, svg);
  const sources = {};
  for (const m of state.legal) if (m.kind === "move") (sources[m.from] = sources[m.from] || []).push(m);
  const r = Math.min(pw / 2 - 2, 17);
  const MINE = "#faf6ec", THEIRS = "#2b2b2b";

  // point 1..24 from the person's side: 1-6 bottom right (1 at the far right), 7-12 bottom
  // left, 13-18 top left, 19-24 top right
  function pointX(p) {
    if (p <= 6) return M + inner - (p - 0.5) * pw;
    if (p <= 12) return M + (12.5 - p) * pw;
    if (p <= 18) return M + (p - 12.5) * pw;
    return M + inner - (24.5 - p) * pw;
  }
  function stack(cx, bottom, n, color, up, label) {
    const shown = Math.min(n, 5);
    for (let i = 0; i < shown; i++) {
      const cy = up ? bottom - r - i * 2 * r : bottom + r + i * 2 * r;
      el("circle", {cx, cy, r: r - 1, fill: color, stroke: color === MINE ? "#777" : "#000", "stroke-width": 1.5}, svg);
    }
    if (n > 5 || label) {
      const cy = up ? bottom - r - 4 * 2 * r : bottom + r + 4 * 2 * r;
      el("text", {x: cx, y: cy + 5, "font-size": 14, "text-anchor": "middle", "font-weight": "bold",
                  fill: color === MINE ? "#222" : "#fff"}, svg, String(n));
    }
  }
  for (let p = 1; p <= 24; p++) {
    const cx = pointX(p);
    const top = p >= 13;
    const base = top ? M : H - M;
    const tip = top ? M + 160 : H - M - 160;
    const colour = p % 2 ? "#a0522d" : "#2f5d50";
    const g = el("g", {class: sources[p] ? "clickable" : "", "data-point": p}, svg);
    el("polygon", {points: (cx - pw / 2) + "," + base + " " + (cx + pw / 2) + "," + base + " " + cx + "," + tip,
                   fill: colour, stroke: sources[p] ? "#ffd400" : "none", "stroke-width": 4}, g);
    el("text", {x: cx, y: top ? M - 5 : H - 6, "font-size": 11, "text-anchor": "middle", fill: "#f3f1ea"}, svg, String(p));
    const n = v.points[p - 1];
    if (n) stack(cx, base, Math.abs(n), n > 0 ? MINE : THEIRS, !top);
    if (sources[p]) g.addEventListener("click", () => choose(sources[p]));
  }
  // the bar: my checkers in the lower half, the opponent's in the upper
  const bx = barX + BAR / 2;
  if (v.bar) {
    stack(bx, H / 2 + 10, v.bar, MINE, false, true);
    if (sources[25]) {
      const hit = el("rect", {x: barX, y: H / 2, width: BAR, height: H / 2 - M, fill: "transparent",
                              stroke: "#ffd400", "stroke-width": 4, class: "clickable"}, svg);
      hit.addEventListener("click", () => choose(sources[25]));
    }
  }
  if (v.opp_bar) stack(bx, H / 2 - 10, v.opp_bar, THEIRS, true, true);
  // the tray: borne-off checkers
  const tx = W - M - TRAY + 8;
  el("rect", {x: tx, y: M, width: TRAY - 8, height: H - 2 * M, fill: "#4a2d1a", rx: 4}, svg);
  el("text", {x: tx + (TRAY - 8) / 2, y: M + 20, "font-size": 12, "text-anchor": "middle", fill: "#fff"}, svg, "off");
  el("text", {x: tx + (TRAY - 8) / 2, y: M + 40, "font-size": 16, "text-anchor": "middle", fill: "#ccc"}, svg, String(v.opp_off));
  el("text", {x: tx + (TRAY - 8) / 2, y: H - M - 30, "font-size": 16, "text-anchor": "middle", fill: "#fff", "font-weight": "bold"}, svg, String(v.off));
  el("text", {x: tx + (TRAY - 8) / 2, y: H - M - 12, "font-size": 12, "text-anchor": "middle", fill: "#fff"}, svg, "off");
  // the dice still to play, in the right half
  const dice = v.dice.length ? v.dice : [];
  let dx = M + 9 * pw - dice.length * 22;
  for (const d of dice) {
    el("rect", {x: dx, y: H / 2 - 18, width: 36, height: 36, rx: 6, fill: v.on_roll === v.seat ? MINE : THEIRS, stroke: "#333"}, svg);
    pips(svg, dx, H / 2 - 18, 36, d, v.on_roll === v.seat ? "#222" : "#fff");
    dx += 44;
  }
  const who = state.status === "over" ? "" : (v.on_roll === v.seat ? "you (" + v.you + ") on roll" : v.them + " on roll");
  el("text", {x: M + 3 * pw, y: H / 2 + 5, "font-size": 13, "text-anchor": "middle", fill: "#333"}, svg, who);
  el("text", {x: M + 3 * pw, y: H / 2 + 24, "font-size": 12, "text-anchor": "middle", fill: "#555"}, svg,
     "pips: you " + v.pips[0] + ", " + v.them + " " + v.pips[1]);
}

// ------------------------------------------------------------------ start
async function start() {
  try {
    catalogue = (await api("GET", "/api/games")).games;
  } catch (err) {
    showError("cannot load the games: " + err.message);
    return;
  }
  const select = $("game");
  for (const g of catalogue) html("option", {value: g.name, title: g.description}, select, g.name);
  select.value = catalogue.some((g) => g.name === "happy") ? "happy" : catalogue[0].name;
  select.addEventListener("change", buildOptions);
  buildOptions();
  $("seed").value = Math.floor(Math.random() * 100000);
  $("setup-form").addEventListener("submit", newGame);
  document.body.dataset.status = "ready";
}

start();
