// The analysis board of `pipslab serve`: a domino position solved (POST /api/analyze
// {position}), a backgammon roll's plays ranked ({position_id, dice, eval}), and, with
// `--from DIR`, a recorded tournament game stepped through with the same annotation at
// every move (GET /api/records, /api/records/ID).  <body data-status data-kind data-step>
// tell a test (or a person's script) what is shown.
"use strict";

let record = null;      // the recorded game being stepped through
let step = 0;
let asked = 0;          // the latest request: older answers are dropped

// Run one request (the page shows "busy" meanwhile); its answer is drawn unless a newer one was asked.
async function ask(request, draw) {
  const mine = ++asked;
  document.body.dataset.status = "busy";
  showError("");
  try {
    const data = await request();
    if (mine !== asked) return;
    draw(data);
    // drawing may itself ask again (opening a record steps to its first move): then that
    // request is the one pending, and the page is not "shown" until its answer is drawn
    if (mine === asked) document.body.dataset.status = "shown";
  } catch (err) {
    if (mine !== asked) return;
    showError(err.message);
    document.body.dataset.status = "error";
  }
}

function signed(x, digits) {
  if (x === null || x === undefined) return "–";
  const text = digits === undefined ? String(x) : x.toFixed(digits);
  return x > 0 ? "+" + text : text;
}

function table(heads) {
  const box = $("values");
  box.textContent = "";
  const row = html("tr", {}, box);
  for (const h of heads) html("th", {}, row, h);
  return box;
}

function showArea(kind, headline, board, note) {
  $("analysis").hidden = false;
  document.body.dataset.kind = kind;
  $("headline").textContent = headline;
  $("board").hidden = !board;
  $("board").textContent = board || "";
  $("note").textContent = note || "";
  $("line").textContent = "";
}

// ------------------------------------------------------------------ dominoes
function showSolve(data, board, played) {
  const side = data.side ? " (values are " + data.side + "'s)" : "";
  showArea("dominoes", "seat " + data.to_move + " to move" + side + ": " + data.result
           + (data.margin === null ? "" : ", final margin " + signed(data.margin) + " pips") + " with best play",
           board, "Exact values with every hand open (perfect information: the solver sees every tile, "
           + "the players did not). Value = result × 1000 + final pip margin, from the mover's side.");
  const box = table(["move", "result", "margin", "value"]);
  const best = Math.max(...data.moves.map((m) => m.value));
  for (const m of data.moves) {
    const row = html("tr", {"data-move": m.move, "data-value": m.value, "data-action": m.action}, box);
    if (m.value === best) row.classList.add("best");
    if (m.action === played) { row.classList.add("played"); row.dataset.played = "1"; }
    html("td", {}, row, m.move);
    html("td", {}, row, m.result);
    html("td", {class: "num"}, row, signed(m.margin));
    html("td", {class: "num"}, row, String(m.value));
  }
  $("line").textContent = "principal line: " + data.line.join(" → ") + (data.line_cut ? " …" : "");
}

function solve(event) {
  event.preventDefault();
  const position = $("position").value.trim();
  ask(() => api("POST", "/api/analyze", {position}), (data) => showSolve(data, "", null));
}

// ------------------------------------------------------------------ backgammon
function showPlays(data, board, played) {
  const n = data.plays[0].move === "pass" ? 0 : data.plays.length;
  showArea("backgammon", n + " legal play" + (n === 1 ? "" : "s") + " of " + data.dice.join("-") + " from "
           + data.position_id + ", ranked by " + data.eval, board,
           "Equity: cubeless money equity of the position after the play, for the player who made it "
           + "(+1 a win, 2 a gammon, 3 a backgammon).");
  const box = table(["#", "play", "equity", "resulting Position ID"]);
  data.plays.forEach((p, i) => {
    const row = html("tr", {"data-move": p.move, "data-equity": p.equity, "data-position-id": p.position_id}, box);
    if (i === 0) row.classList.add("best");
    if (p.position_id === played) { row.classList.add("played"); row.dataset.played = "1"; }
    html("td", {class: "num"}, row, String(i + 1));
    html("td", {}, row, p.move);
    html("td", {class: "num"}, row, signed(p.equity, 3));
    html("td", {}, row, p.position_id);
  });
}

function backgammonRequest(positionId, dice) {
  return {position_id: positionId, dice, eval: $("eval").value.trim() || "td"};
}

function rank(event) {
  event.preventDefault();
  const dice = [parseInt($("die-a").value, 10), parseInt($("die-b").value, 10)];
  ask(() => api("POST", "/api/analyze", backgammonRequest($("position-id").value.trim(), dice)),
      (data) => showPlays(data, data.board, null));
}

// ------------------------------------------------------------------ a recorded game
async function loadRecords() {
  let data;
  try {
    data = await api("GET", "/api/records");
  } catch (err) {
    return;   // no --from: no recorded games
  }
  $("records").hidden = false;
  $("records-from").textContent = data.from;
  for (const g of data.games) {
    html("option", {value: g.id}, $("record"), "game " + g.id + ": " + g.variant + ", " + g.agents.join(" v ")
         + ", " + g.moves + " moves, " + (g.winner ? g.winner + " wins" : g.result));
  }
}

function openRecord(event) {
  event.preventDefault();
  ask(() => api("GET", "/api/records/" + $("record").value), (data) => {
    record = data;
    $("stepper").hidden = false;
    goTo(0);
  });
}

function goTo(k) {
  if (!record || !record.steps.length) return;
  step = Math.max(0, Math.min(k, record.steps.length - 1));
  const s = record.steps[step];
  document.body.dataset.step = step;
  $("step-label").textContent = "move " + (step + 1) + " of " + record.steps.length + ": seat " + s.seat + " ("
    + s.agent + ") " + (s.roll ? "rolls " + s.roll.join("-") + ", " : "") + "plays " + s.move;
  const label = record.label + ", game " + record.id + ", move " + (step + 1) + ": ";
  let request = null, draw = null;
  if (s.position !== undefined) {
    request = () => api("POST", "/api/analyze", {position: s.position});
    draw = (data) => showSolve(data, s.board, s.action);
  } else if (s.position_id !== undefined) {
    request = () => api("POST", "/api/analyze", backgammonRequest(s.position_id, s.roll));
    draw = (data) => showPlays(data, s.board, s.played_id);
  }
  // a position the analysis refuses (a match, three players, too large): the board and the reason
  const refused = (why) => {
    showArea(record.family, label + "seat " + s.seat + " (" + s.agent + ") plays " + s.move, s.board, why);
    $("values").textContent = "";
  };
  if (!request) {
    ask(async () => null, () => refused("no analysis for this game"));
    return;
  }
  ask(async () => { try { return await request(); } catch (err) { return {refused: err.message}; } },
      (data) => data.refused === undefined ? draw(data) : refused("no annotation: " + data.refused));
}

// ------------------------------------------------------------------ start
async function start() {
  $("solve-form").addEventListener("submit", solve);
  $("rank-form").addEventListener("submit", rank);
  $("record-form").addEventListener("submit", openRecord);
  $("first").addEventListener("click", () => goTo(0));
  $("prev").addEventListener("click", () => goTo(step - 1));
  $("next").addEventListener("click", () => goTo(step + 1));
  $("last").addEventListener("click", () => goTo(Infinity));
  document.addEventListener("keydown", (e) => {   // the arrow keys step, outside the forms' fields
    if (!record || ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName)) return;
    if (e.key === "ArrowLeft") goTo(step - 1);
    if (e.key === "ArrowRight") goTo(step + 1);
  });
  try {
    const menu = await api("GET", "/api/evaluators");
    for (const name of menu.backgammon) html("option", {value: name}, $("eval-list"));
    $("eval").value = menu.default;
  } catch (err) {
    showError("cannot load the evaluators: " + err.message);
  }
  await loadRecords();
  document.body.dataset.status = "ready";
}

start();
