// The Qwixx play page: plain JavaScript, no build step. It talks to the JSON API of
// qwixx_env/play/server.py and draws every sheet as the printed one is drawn.
"use strict";

// The rows, their numbers, each cell's colour and the coloured dice come with the game, in its
// "sheet" (qwixx_env/play/games.py, sheet_layout): a variant with other rows is drawn from them.
const PAINTED = ["red", "yellow", "green", "blue"];  // the colours style.css has shades of its own for
const PHASE_WORDS = { white: "White action", lucky: "Lucky cross", color: "Colour action", over: "Game over" };
const BOT_WORDS = {
  random: "crosses at random",
  greedy: "crosses whatever skips few numbers",
  heuristic: "a hand-tuned evaluation of the sheet",
  rollout: "plays the game a few rolls ahead (search)",
  afterstate: "a learned win chance (classic, 2–4 players)",
  solo_optimal: "the exact optimal solo policy (classic)",
};
const PIPS = { 1: [5], 2: [1, 9], 3: [1, 5, 9], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9],
  7: [1, 3, 4, 5, 6, 7, 9], 8: [1, 2, 3, 4, 6, 7, 8, 9] };

const S = {
  info: null,          // /api/info
  game: null,          // the last game view from the server (the truth)
  shown: null,         // what the table shows now: {snapshot, to_decide, roll}
  queue: [],           // events still to show, one by one
  timer: null,
  playing: false,
  coach: null,         // coach values for the current decision
  replay: null,        // the replay viewer's record: {id, options, sheet, frames}
  step: 0,
  rpCoach: null,
  lookTimer: null,     // the next look at a game that is still getting ready
  source: null,        // the game's event stream (tables of several people): "the game changed"
  confirmPass: null,   // a pass that costs a penalty, asked about: {action, decisions}
  whenReady: new Map(), // requests refused as "getting ready", to send again: purpose -> function
  readyTimer: null,    // the next look at what the server is still preparing
};
// A seat's secret goes in this header; the page keeps the secrets of its seats in localStorage
// (SEAT_STORE) so that a closed tab can rejoin, and lists them in SEATS_HEADER to see its games.
const SEAT_HEADER = "X-Qwixx-Seat";
const SEATS_HEADER = "X-Qwixx-Seats";
const SEAT_STORE = "qwixx-seats";
const HERE = "@here";  // a seat's choice in the new-game form: a person at this screen (hot-seat)
const LINK = "@link";  // a person who plays from their own browser, by a join link

// --- small helpers ---------------------------------------------------------------------

const $ = (id) => document.getElementById(id);
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}
function svg(markup, cls) {
  const wrap = document.createElement("span");
  wrap.innerHTML = markup;
  const el = wrap.firstElementChild;
  if (cls) el.setAttribute("class", cls);
  return el;
}
const CROSS = '<svg viewBox="0 0 40 40" class="x"><path d="M7 7 L33 33 M33 7 L7 33" stroke="#1b1b1b" stroke-width="5" stroke-linecap="round" fill="none"/></svg>';
const PADLOCK = '<svg viewBox="0 0 24 24" class="padlock"><path d="M7 10V7a5 5 0 0 1 10 0v3" stroke="currentColor" stroke-width="2.4" fill="none"/><rect x="4.5" y="10" width="15" height="11" rx="2.5" fill="currentColor"/></svg>';
const CLOVER = '<svg viewBox="0 0 24 24" width="14" height="14"><g fill="#2e7d32"><circle cx="8" cy="8" r="4.5"/><circle cx="16" cy="8" r="4.5"/><circle cx="8" cy="16" r="4.5"/><circle cx="16" cy="16" r="4.5"/></g><path d="M12 12 L18 22" stroke="#2e7d32" stroke-width="2"/></svg>';

async function api(method, path, body, headers) {
  const init = { method, headers: { ...(headers || {}) } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await fetch(path, init);
  let data = null;
  try { data = await res.json(); } catch (e) { data = { error: `${res.status} ${res.statusText}` }; }
  if (!res.ok) {
    const err = new Error((data && data.error) || `${res.status} ${res.statusText}`);
    err.ready = data && data.ready;  // a 503 "getting ready": what the server is preparing
    throw err;
  }
  return data;
}
function toast(text, bad) {
  const t = $("toast");
  t.textContent = text;
  t.className = "toast" + (bad ? " bad" : "");
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, bad ? 7000 : 3500);
}
function seatName(game, seat) {
  if (!game.seats) return `Player ${seat + 1}`;
  const s = game.seats[seat];
  if (s.kind === "you") return Object.keys(seatsOf(game.id)).length > 1 ? s.name : "You";
  if (s.kind === "human") return s.name;
  const same = game.seats.filter((x) => x.bot === s.bot).length;
  return same > 1 ? `${s.bot} (seat ${seat + 1})` : s.bot;
}
function markOfAction(sheet, action) {
  // an action index as a mark: row r*K + i crosses the i-th number of row r; R*K passes
  const r = Math.floor(action / sheet.cells);
  const row = sheet.row_names[r];
  return row === undefined ? null : { row, number: sheet.rows[row][action % sheet.cells] };
}
function markWords(mark) { return mark ? `${mark.row} ${mark.number}` : "pass"; }
function rowTitle(row) { return row.charAt(0).toUpperCase() + row.slice(1); }
// A colour as the page paints it: the class of its shades in style.css, or "custom" with the
// colour in --custom (a CSS colour keyword as the variant names it, else grey); `css` is the
// colour itself, for an inline style.
function paint(color) {
  if (PAINTED.includes(color)) return { cls: color, style: null, css: `var(--${color})` };
  const css = window.CSS && CSS.supports("color", color) ? color : "#8a8f98";
  return { cls: "custom", style: `--custom: ${css}`, css };
}
function cellColor(sheet, mark) { return sheet.cell_colors[mark.row][sheet.rows[mark.row].indexOf(mark.number)]; }
// A row's one colour, or null where its cells mix colours (each cell is then painted on its own).
function rowColor(sheet, row) {
  const colors = sheet.cell_colors[row];
  return colors.every((c) => c === colors[0]) ? colors[0] : null;
}
// How a row (and its points box) is painted: in its one colour, or "mixed" (neutral).
function rowLook(sheet, row) {
  const one = rowColor(sheet, row);
  return one === null ? { cls: "mixed", style: null } : paint(one);
}
function chip(cls, sheet, mark, text) {
  const p = mark ? paint(cellColor(sheet, mark)) : { cls: "pass", style: null };
  return h("span", { class: `${cls} ${p.cls}`, style: p.style, "data-color": mark ? cellColor(sheet, mark) : null, text });
}
function rowCount(player, row) { return player.marks[row].length + (player.locks.includes(row) ? 1 : 0); }

// --- the seats this page holds (their secrets, kept in localStorage) -------------------------

function keptSeats() {
  try { return JSON.parse(localStorage.getItem(SEAT_STORE)) || {}; } catch (e) { return {}; }
}
function keepSeats(gameId, seats, links) {
  const all = keptSeats();
  const had = all[gameId] || { seats: {}, links: [] };
  all[gameId] = { seats: { ...had.seats, ...seats }, links: links || had.links };
  try { localStorage.setItem(SEAT_STORE, JSON.stringify(all)); } catch (e) { /* no storage: this tab only */ }
}
function forgetGames(asked, listed) {
  // drop what the page kept for games the server no longer holds: of the games it asked about
  // (`asked`), those the answer does not list. A game kept since the question was sent (a join
  // link opened, a game started while the answer was on its way) is not in its answer, and stays.
  const all = keptSeats();
  for (const id of asked) if (!listed.has(id)) delete all[id];
  try { localStorage.setItem(SEAT_STORE, JSON.stringify(all)); } catch (e) { /* no storage */ }
}
function seatsOf(gameId) { return (keptSeats()[gameId] || { seats: {} }).seats; }  // seat -> secret
function linksOf(gameId) { return (keptSeats()[gameId] || { links: [] }).links; }
function asSeat(secret) { return secret ? { [SEAT_HEADER]: secret } : {}; }
function secretOf(g) { return g && g.you !== null && g.you !== undefined ? seatsOf(g.id)[g.you] : undefined; }

// --- what the server is still preparing (/api/info's "ready") -------------------------------

// The server prepares the bots' kernels and the solo table in the background; until all is
// done the page shows a small status, looks again every READY_POLL_MS, marks the bots not
// ready yet in the menus, and sends again what was refused as "getting ready" once an item is.
const READY_POLL_MS = 1500;
function readyOf(name) {
  const item = S.info && S.info.ready ? S.info.ready[name] : undefined;
  return item ? item.state : "ready";  // an item the server does not prepare is ready
}
function stillPreparing() {
  return Object.entries((S.info && S.info.ready) || {}).filter(([, item]) => item.state === "waiting" || item.state === "preparing");
}
function botLabel(name) {
  const state = readyOf(name);
  return state === "ready" ? name : state === "failed" ? `${name} (not available)` : `${name} (getting ready)`;
}
function labelBots() {
  // the seats' and the coach's menus, in place (a menu rebuilt while open would close)
  document.querySelectorAll(".seat-bot select option, #coach-bot option").forEach((o) => {
    if (o.value && !o.value.startsWith("@")) o.textContent = botLabel(o.value);
  });
}
const READY_NAMED = 3;  // the items waiting that the status names; the rest it counts
function renderReady() {
  const box = $("ready-status");
  const items = stillPreparing();
  box.hidden = !items.length;
  if (items.length) {
    const now = items.filter(([, item]) => item.state === "preparing")
      .map(([, item]) => `${item.doing} ${Math.round(100 * item.progress)}%`);
    const next = items.filter(([, item]) => item.state === "waiting").map(([name]) => name);
    const more = next.length > READY_NAMED ? ` and ${next.length - READY_NAMED} more` : "";
    const waiting = next.length ? `next: ${next.slice(0, READY_NAMED).join(", ")}${more}` : null;
    box.textContent = `Getting ready: ${[...now, waiting].filter(Boolean).join(" · ")}`;
  }
  // the box is fixed over the page's foot: the page ends below it, so nothing stays under it
  document.body.style.paddingBottom = items.length ? `${box.offsetHeight + 12}px` : "";
}
function takeReady(ready) {
  // the server's statuses; when an item has become ready (or failed), what waits is sent again
  const before = S.info.ready || {};
  S.info.ready = ready;
  const settled = Object.entries(ready).some(([name, item]) => (item.state === "ready" || item.state === "failed")
    && (!before[name] || before[name].state !== item.state));
  renderReady();
  labelBots();
  if (settled) {
    const again = [...S.whenReady.values()];
    S.whenReady.clear();
    for (const send of again) send();
  }
  watchReady();
}
function watchReady() {
  if (S.readyTimer || !stillPreparing().length) return;
  S.readyTimer = setTimeout(async () => {
    S.readyTimer = null;
    try {
      takeReady((await api("GET", "/api/info")).ready || {});
    } catch (err) {
      watchReady();  // the server did not answer: look again later
    }
  }, READY_POLL_MS);
}
// A request refused as "getting ready" (a 503 with "ready"): `send` goes again once an item it
// may need is ready. Whether it will: false when the refusal was not of that kind, or when
// nothing is still being prepared (an item failed), as waiting would not help.
function sendWhenReady(purpose, err, send) {
  if (!err.ready) return false;
  takeReady(err.ready);
  if (!stillPreparing().length) return false;
  S.whenReady.set(purpose, send);
  return true;
}

// --- views -------------------------------------------------------------------------------

function showView(name) {
  for (const v of ["new", "play", "replay"]) {
    $(`view-${v}`).hidden = v !== name;
    $(`tab-${v}`).toggleAttribute("aria-current", v === name);
    if (v === name) $(`tab-${v}`).setAttribute("aria-current", "page");
  }
  document.body.dataset.view = name;
}

// --- drawing a sheet ---------------------------------------------------------------------

// One player's sheet as printed: its coloured rows with their numbers, the lock at the end
// of each row, the row scores, the penalty boxes and the total. `opts`: name, seat, badges,
// legal (action -> {key, value, best}), pending (actions), compact, onPick(action), flash (set of actions).
function drawSheet(sheet, snap, seat, opts) {
  const player = snap.players[seat];
  const K = sheet.cells;
  const head = h("div", { class: "sheet-head" },
    h("span", { class: "sheet-name", text: opts.name }),
    (opts.badges || []).map((b) => h("span", { class: `badge ${b[0]}`, text: b[1] })),
    player.lucky_numbers.length ? h("span", { class: "badge lucky", title: "lucky numbers" }, svg(CLOVER),
      `lucky ${player.lucky_numbers.join(" · ")}`) : null,
    h("span", { class: "sheet-score", "data-score": String(player.score) }, String(player.score), h("small", { text: " points" })),
  );
  const rows = sheet.row_names.map((row, r) => {
    const numbers = sheet.rows[row];
    const colors = sheet.cell_colors[row];
    const mixed = rowColor(sheet, row) === null;
    const look = rowLook(sheet, row);
    const crossed = new Set(player.marks[row]);
    const rowLocked = snap.locked_rows.includes(row);
    const hasLock = player.locks.includes(row);
    let last = -1;
    numbers.forEach((n, i) => { if (crossed.has(n)) last = i; });
    const cells = numbers.map((n, i) => {
      const action = r * K + i;
      const isCrossed = crossed.has(n);
      const gone = !isCrossed && (i < last || rowLocked);
      const legal = opts.legal && opts.legal.get(action);
      const isLock = sheet.lock_numbers[row].includes(n);
      // a cell that starts a line (the row's first, or the second line's where a narrow sheet wraps)
      const starts = i === 0 || i === Math.ceil((K + 1) / 2);
      const cls = ["cell", starts && "line-start", isCrossed && "crossed", gone && "gone", legal && "legal", isLock && "lockcell",
        legal && legal.value !== undefined && "valued",
        opts.pending && opts.pending.has(action) && "pending", opts.flash && opts.flash.has(action) && "flash"]
        .filter(Boolean).join(" ");
      const own = mixed ? paint(colors[i]) : null;  // a mixed row's cell: painted its own colour
      const label = `${rowTitle(row)} ${n}${own ? ` (the ${colors[i]} die)` : ""}`
        + `${isCrossed ? ", crossed" : gone ? ", skipped" : ""}${legal ? ", you may cross it" : ""}`
        + (isLock ? ` (lock cell: crossable after ${sheet.lock_threshold} crosses in the row)` : "");
      const el = h("div", {
        class: own ? `${cls} ${own.cls}` : cls, style: own && own.style, "data-color": colors[i],
        "data-action": String(action), "data-number": String(n), "aria-label": label, title: label,
        role: legal ? "button" : null, tabindex: legal && opts.onPick ? "0" : null,
      }, h("span", { class: "num", text: String(n) }));
      if (isCrossed) el.prepend(svg(CROSS));  // under the number, which stays readable on it
      if (isLock) el.append(h("span", { class: "need", "aria-hidden": "true", text: `${sheet.lock_threshold}+` }));
      if (legal && legal.key) el.append(h("span", { class: "key", text: legal.key }));
      if (legal && legal.value !== undefined) el.append(h("span", { class: "value" + (legal.best ? " best" : ""), text: legal.value }));
      if (legal && opts.onPick) {
        el.addEventListener("click", () => opts.onPick(action));
        el.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); opts.onPick(action); } });
      }
      return el;
    });
    const lock = h("div", {
      class: "lock" + (hasLock ? " crossed" : "") + (rowLocked && !hasLock ? " closed-by-other" : ""),
      title: hasLock ? `${rowTitle(row)} locked by this player` : rowLocked ? `${rowTitle(row)} row locked` : `${rowTitle(row)} lock`,
      style: `color: ${paint(colors[colors.length - 1]).css}`,  // the colour of its lock cell's die
    }, svg(PADLOCK, "padlock"));
    if (hasLock) lock.append(svg(CROSS));
    const count = rowCount(player, row);
    const points = sheet.score_table[count];
    const says = `${count} cross${count === 1 ? "" : "es"} in ${row} (the lock counts as one): ${points} points${rowLocked ? "; the row is locked" : ""}`;
    return h("div", { class: `row ${look.cls}` + (rowLocked ? " closed" : ""), style: look.style, "data-row": row },
      h("span", { class: "row-name", "data-short": rowTitle(row)[0], text: rowTitle(row) }),
      h("div", { class: "cells" }, cells, lock),
      h("span", { class: "row-count", title: says, "aria-label": says, "data-crosses": String(count) },
        h("b", { text: `${count}×` }), h("span", { class: "pts", text: `${points} pts` })));
  });
  const sums = sheet.row_names.map((row, r) => [
    h("span", { class: `sum-box ${rowLook(sheet, row).cls}`, style: rowLook(sheet, row).style, title: `${rowTitle(row)} points` },
      String(sheet.score_table[rowCount(player, row)])),
    h("span", { class: "op", text: r < sheet.row_names.length - 1 ? "+" : "−" })]);
  const foot = h("div", { class: "sheet-foot" },
    sums.flat(),
    h("span", { class: "sum-box pen", title: "penalty points" }, String(player.penalties * sheet.penalty_points)),
    h("span", { class: "op", text: "=" }),
    h("span", { class: "sum-box total", title: "total" }, String(player.score)),
    h("span", { class: "penalties", "data-penalties": String(player.penalties) }, "penalties",
      Array.from({ length: sheet.max_penalties }, (_, i) => {
        const box = h("span", { class: "pbox", title: i < player.penalties ? "penalty taken" : "penalty box" });
        if (i < player.penalties) box.append(svg(CROSS));
        return box;
      })),
  );
  return h("div", {
    class: "sheet" + (opts.compact ? " compact" : "") + (opts.deciding ? " deciding" : ""),
    // --half: the cells of a row's first line where a narrow sheet wraps its rows in two (style.css)
    "data-seat": String(seat), "data-cells": String(K), style: `--cells: ${K}; --half: ${Math.ceil((K + 1) / 2)}`,
  }, head, h("div", { class: "rows-head", "aria-hidden": "true" }, h("span", { class: "count-head", text: "crosses · points" })),
  rows, foot);
}

function drawDice(el, snap, sheet, animate) {
  el.replaceChildren();
  const die = (value, color) => {
    const look = color === "white" ? { cls: "white", style: null } : paint(color);
    const d = h("div", { class: `die ${look.cls}` + (value === null ? " out" : "") + (animate ? " roll" : ""), style: look.style,
      title: value === null ? `${color} die: out of play (row locked)` : `${color} die: ${value}`,
      "data-die": color, "data-value": value === null ? "" : String(value) });
    if (value !== null) {
      const ink = color === "white" || color === "yellow" ? "#222" : "#fff";
      const spots = PIPS[value] || [];
      const at = (k) => [10 + ((k - 1) % 3) * 10, 10 + Math.floor((k - 1) / 3) * 10];
      d.append(svg(`<svg viewBox="0 0 40 40">${spots.map((k) => `<circle cx="${at(k)[0]}" cy="${at(k)[1]}" r="3.6" fill="${ink}"/>`).join("")}</svg>`));
    }
    return d;
  };
  const w = snap.dice.white;
  el.append(die(w[0], "white"), die(w[1], "white"), h("span", { class: "sum", text: `= ${w[0] + w[1]}` }), h("span", { class: "sep" }));
  for (const color of sheet.dice_colors) el.append(die(snap.dice[color], color));
}

// --- the table ---------------------------------------------------------------------------

function optionKeys(legal) {
  // 1..9 for the crosses in the order listed, P for pass
  let n = 0;
  return legal.map((o) => ({ ...o, key: o.mark ? String(++n) : "P" }));
}

function renderTable() {
  const g = S.game;
  if (!g) return;
  if (g.begun === false) { renderWaiting(); return; }
  const live = !S.playing;           // showing the server's latest state (not replaying events)
  const shown = live ? { snapshot: g.snapshot, to_decide: g.to_decide } : S.shown;
  const snap = shown.snapshot;
  const sheet = g.sheet;
  const yourTurn = live && g.to_decide === g.you && !g.over;
  const options = yourTurn ? optionKeys(g.legal) : [];
  const values = yourTurn && S.coach && $("coach-on").checked ? coachByAction(S.coach) : null;
  const legal = new Map(options.filter((o) => o.mark).map((o) => [o.action, {
    key: o.key, value: values && values.get(o.action) ? values.get(o.action).text : undefined,
    best: values && values.get(o.action) ? values.get(o.action).best : false,
  }]));
  const pending = new Set((live ? g.pending : []).map((p) => p.action));
  const flash = S.flash || new Set();
  const order = [g.you, ...g.seats.map((s) => s.seat).filter((s) => s !== g.you)];
  const winners = new Set(g.over && live ? g.winners : []);
  const drawn = order.map((seat) => {
    const badges = [];
    if (seat === snap.active_player && snap.phase !== "over") badges.push(["active", "rolls the dice"]);
    if (shown.to_decide === seat && seat !== g.you && !g.over) badges.push(["thinking", "deciding…"]);
    if (winners.has(seat) && g.seats.length > 1) badges.push(["winner", winners.size > 1 ? "shares the win" : "winner"]);
    return drawSheet(sheet, snap, seat, {
      name: seatName(g, seat), badges, compact: seat !== g.you && g.seats.length > 2,
      legal: seat === g.you ? legal : null, pending: seat === g.you ? pending : null,
      flash: S.flashSeat === seat ? flash : null, deciding: shown.to_decide === seat && snap.phase !== "over",
      onPick: seat === g.you && yourTurn ? (a) => pickAction(a) : null,
    });
  });
  $("play-sheets").replaceChildren(drawn[0], h("div", { class: "others" + (drawn.length > 2 && sheet.cells <= 11 ? " many" : "") }, drawn.slice(1)));
  drawDice($("play-dice"), snap, sheet, S.rolled);
  S.rolled = false;
  $("play-roll").textContent = `Roll ${snap.roll + 1} · ${seatName(g, snap.active_player)} ${snap.active_player === g.you ? "roll" : "rolls"}`;
  const ph = $("play-phase");
  ph.textContent = PHASE_WORDS[snap.phase];
  ph.className = `phase ${snap.phase}`;
  // the banner and the options
  const banner = $("play-banner");
  banner.className = "banner";
  const whiteSum = snap.dice.white[0] + snap.dice.white[1];
  if (g.over && live) {
    banner.classList.add("over");
    const scores = snap.players.map((p) => p.score);
    banner.textContent = g.seats.length === 1 ? `Game over — you scored ${scores[g.you]} points.`
      : g.winners.includes(g.you)
      ? (g.winners.length > 1 ? `Game over — you share the win with ${Math.max(...scores)} points!` : `Game over — you win with ${scores[g.you]} points!`)
      : `Game over — ${g.winners.map((s) => seatName(g, s)).join(" and ")} ${g.winners.length > 1 ? "win" : "wins"} with ${Math.max(...scores)}; you scored ${scores[g.you]}.`;
  } else if (yourTurn) {
    banner.classList.add("your-turn");
    banner.textContent = snap.phase === "color"
      ? "Your colour action: cross a white die + a coloured die in that colour's row, or pass."
      : snap.phase === "lucky"
        ? "Your lucky cross ties between rows: choose the row that gets it."
        : `White action: you may cross the white sum ${whiteSum} in any one row, or pass.`;
  } else if (shown.to_decide !== null && shown.to_decide !== undefined) {
    banner.textContent = `${seatName(g, shown.to_decide)} ${snap.phase === "color" ? "is making the colour action" : "is choosing a white cross"}…`;
  } else {
    banner.textContent = "";
  }
  const prompt = $("play-prompt");
  prompt.replaceChildren();
  if (yourTurn) {
    prompt.append(snap.phase === "color" ? "Colour action" : snap.phase === "lucky" ? "Lucky cross" : `White sum ${whiteSum}`);
    if (g.pass_penalty) prompt.append(h("span", { class: "warn", text: " — passing now costs a penalty" }));
  } else prompt.append(g.over && live ? "The game is over." : S.playing ? "The bots are playing…" : "Waiting…");
  const box = $("play-options");
  if (yourTurn && confirmingPass(g)) box.replaceChildren(penaltyConfirm(g));
  else box.replaceChildren(...options.map((o) => {
    const v = values && values.get(o.action);
    return h("button", {
      type: "button", class: "option" + (v && v.best ? " suggested" : "") , "data-action": String(o.action),
      onclick: () => pickAction(o.action),
    },
    h("kbd", { text: o.key }),
    chip("chip", g.sheet, o.mark, o.mark ? String(o.mark.number) : "–"),
    h("span", { class: "what", text: o.mark ? `Cross ${markWords(o.mark)}` : (g.pass_penalty ? "Pass (penalty)" : "Pass") }),
    v ? h("span", { class: "val" + (v.best ? " best" : ""), text: v.full }) : null);
  }));
  $("skip").disabled = !S.playing;
  // for scripts and tests: whose turn the page shows, and how many decisions it has seen
  document.body.dataset.turn = yourTurn ? "you" : g.over && live ? "over" : "wait";
  document.body.dataset.decisions = String(g.decisions);
  renderCoachPanel(yourTurn);
  renderInfo();
}

function renderInfo() {
  const g = S.game;
  const o = g.options;
  $("play-info").replaceChildren(
    h("div", {}, "Game ", h("b", { text: g.id }), ` · ${variantTitle(o.variant)}${(sheetInfo(o.variant) || {}).lucky_numbers ? ` (lucky ${o.lucky})` : ""} · ${o.players} player${o.players > 1 ? "s" : ""}`),
    h("div", {}, "Seed ", h("b", { text: String(o.seed), id: "game-seed" }), ` · starts: ${o.start_player === "random" ? "random" : seatName(g, o.start_player)}`),
    h("div", {}, `Bots: ${o.bots.length ? o.bots.join(", ") : "none (solo)"}`),
  );
  for (const id of ["download-record", "replay-this"]) $(id).disabled = false;
  // the games menu follows the game shown (it is listed when the game starts and ends)
  const item = [...$("games-list").options].find((o) => o.value === g.id);
  if (item) item.textContent = gameLabel({ id: g.id, options: o, over: g.over, decisions: g.decisions, begun: g.begun });
}
function gameLabel(x) {
  const where = x.begun === false ? "getting ready" : x.over ? "over" : `${x.decisions} decision${x.decisions === 1 ? "" : "s"}`;
  return `${x.id.slice(0, 8)}… · ${x.options.variant} · ${x.options.players}p · ${where}`;
}

function logLine(text, cls) {
  const log = $("play-log");
  log.append(h("li", { class: cls || "", text }));
  log.scrollTop = log.scrollHeight;
}

function describe(ev, before) {
  // the log lines of one event, given the snapshot shown before it
  const g = S.game;
  const lines = [];
  const who = ev.kind === "white" ? "" : seatName(g, ev.seat);
  if (ev.kind === "white") {
    const parts = ev.choices.map((c) => `${seatName(g, c.seat)} ${c.mark ? `crossed ${markWords(c.mark)}` : "passed"}`);
    lines.push([`White action (sum ${ev.white_sum}): ${parts.join(" · ")}`, "white"]);
  } else if (ev.hidden) {
    lines.push([`${who} has chosen (hidden until everyone has)`, ""]);
  } else if (ev.phase === "color") {
    const text = ev.mark ? `${who} ${ev.seat === g.you ? "cross" : "crosses"} ${markWords(ev.mark)} (colour action)`
      : `${who} ${ev.seat === g.you ? "pass" : "passes"} the colour action${ev.penalty ? " — penalty!" : ""}`;
    lines.push([text, ev.penalty ? "log-penalty" : ev.seat === g.you ? "log-you" : ""]);
  } else {
    const lucky = ev.lucky ? `, and the lucky cross ${markWords(ev.lucky.mark)}` : "";
    lines.push([`${who} ${ev.mark ? `chose ${markWords(ev.mark)}` : "chose to pass"}${ev.phase === "lucky" ? " (lucky cross)" : ""}${lucky}`, "log-you"]);
  }
  const after = ev.snapshot;
  // what a white action brings (locks, the end, the next roll) is told with its reveal
  if (ev.kind === "decision" && (ev.phase === "white" || ev.phase === "lucky")) return lines;
  for (const row of after.locked_rows) {
    if (!before.locked_rows.includes(row)) {
      const by = after.players.map((p, s) => (p.locks.includes(row) ? seatName(g, s) : null)).filter(Boolean);
      lines.push([`${rowTitle(row)} row locked${by.length ? ` by ${by.join(" and ")}` : ""}!`, "log-lock"]);
    }
  }
  if (after.phase === "over" && before.phase !== "over") {
    lines.push([`Game over: ${after.players.map((p, s) => `${seatName(g, s)} ${p.score}`).join(" · ")}`, "log-lock"]);
  } else if (after.roll !== before.roll) {
    const w = after.dice.white;
    lines.push([`Roll ${after.roll + 1}: ${seatName(g, after.active_player)} ${after.active_player === g.you ? "roll" : "rolls"} — white ${w[0]} + ${w[1]} = ${w[0] + w[1]}`, "log-roll"]);
  }
  return lines;
}

function changedCells(before, after, sheet) {
  const out = new Map();
  after.players.forEach((p, s) => {
    sheet.row_names.forEach((row, r) => {
      for (const n of p.marks[row]) {
        if (!before.players[s].marks[row].includes(n)) {
          if (!out.has(s)) out.set(s, new Set());
          out.get(s).add(r * sheet.cells + sheet.rows[row].indexOf(n));
        }
      }
    });
  });
  return out;
}

// A white-action decision changes nothing on the table until the white action's reveal (the
// event after the last choice), which shows every choice, the locks and the next roll together.
function shownAfter(ev, before) {
  return ev.kind === "decision" && (ev.phase === "white" || ev.phase === "lucky") ? before : ev.snapshot;
}

// Show the server's new events one at a time, at the chosen speed.
function enqueue(events) {
  S.queue.push(...events);
  if (!S.playing && S.queue.length) { S.playing = true; S.coach = null; nextEvent(); }
  else if (!S.playing) finishEvents();
}
function nextEvent() {
  clearTimeout(S.timer);
  if (Number($("speed").value) <= 0) { skipEvents(); return; }  // instant: straight to the end
  const ev = S.queue.shift();
  if (!ev) { finishEvents(); return; }
  const before = S.shown ? S.shown.snapshot : S.game.snapshot;
  for (const [text, cls] of describe(ev, before)) logLine(text, cls);
  const after = shownAfter(ev, before);
  const changed = changedCells(before, after, S.game.sheet);
  S.flash = null;
  S.flashSeat = null;
  if (changed.size === 1) { [[S.flashSeat, S.flash]] = [...changed.entries()]; }
  S.rolled = after.roll !== before.roll;
  S.shown = { snapshot: after, to_decide: ev.to_decide };
  renderTable();
  const pace = Number($("speed").value);
  S.timer = setTimeout(nextEvent, ev.hidden ? pace / 3 : pace);
}
function skipEvents() {
  clearTimeout(S.timer);
  while (S.queue.length) {
    const ev = S.queue.shift();
    const before = S.shown ? S.shown.snapshot : S.game.snapshot;
    for (const [text, cls] of describe(ev, before)) logLine(text, cls);
    S.shown = { snapshot: shownAfter(ev, before), to_decide: ev.to_decide };
  }
  finishEvents();
}
function finishEvents() {
  S.playing = false;
  S.flash = null;
  S.shown = { snapshot: S.game.snapshot, to_decide: S.game.to_decide };
  renderTable();
  if (S.game.over) { showSummary(); refreshGamesList(); }
  else if ($("coach-on").checked && S.game.to_decide === S.game.you) loadCoach();
  handOver();
}

function takeGame(view, animate) {
  if (view.begun === false) { takeWaiting(view); return; }
  clearTimeout(S.lookTimer);
  const fresh = !S.game || S.game.id !== view.id || S.game.begun === false;
  if (!fresh && view.decisions < S.game.decisions) return;  // an answer overtaken by a newer one
  // the events this page has not shown yet (a move's answer and a live update may overlap)
  let events = view.events;
  if (!fresh && view.events_from !== undefined) events = events.slice(Math.max(0, S.game.events_total - view.events_from));
  if (fresh) clearTable(view);
  S.game = view;
  if (fresh) {
    // the game's first roll, before any decision: where the log and the table begin
    S.shown = { snapshot: view.start, to_decide: null };
    logLine(`Roll 1: ${seatName(view, view.start.active_player)} ${view.start.active_player === view.you ? "roll" : "rolls"}`, "log-roll");
  }
  document.body.dataset.seat = String(view.you);
  if (animate) enqueue(events);
  else {
    if (fresh) {
      let before = view.start;
      for (const ev of view.events) { for (const [t, c] of describe(ev, before)) logLine(t, c); before = shownAfter(ev, before); }
    }
    finishEvents();
  }
  if (fresh) { refreshGamesList(); watchGame(view); }
  renderLinks();
}

// Another game comes to the table: nothing of the last one stays queued, shown or logged.
function clearTable(view) {
  clearTimeout(S.timer);
  S.queue = [];
  S.playing = false;
  S.shown = null;
  $("play-log").replaceChildren();
  $("summary").hidden = true;
  location.hash = `game=${view.id}`;
}

// A game whose bots the server is still preparing: the table says what it waits for (and how
// far it is) and looks at the game again every READY_POLL_MS; the game goes on by itself once
// the server has begun it. Nothing to play, record or replay until then.
function takeWaiting(view) {
  if (!S.game || S.game.id !== view.id) {
    clearTable(view);
    if (S.source) S.source.close();
    S.source = null;
    refreshGamesList();
  }
  S.game = view;
  document.body.dataset.seat = String(view.you);
  document.body.dataset.turn = "getting-ready";
  document.body.dataset.decisions = "0";
  renderWaiting();
  renderLinks();
  clearTimeout(S.lookTimer);
  if (!view.getting_ready.failed) S.lookTimer = setTimeout(() => lookAgain(view.id), READY_POLL_MS);
}
async function lookAgain(id) {
  const g = S.game;
  if (!g || g.id !== id || g.begun !== false) return;
  try {
    const view = await api("GET", `/api/games/${id}`, undefined, asSeat(secretOf(g)));
    if (S.game === g) takeGame(view, true);
  } catch (err) {
    toast(err.message, true);
    if (S.game === g) S.lookTimer = setTimeout(() => lookAgain(id), READY_POLL_MS);
  }
}
function renderWaiting() {
  const g = S.game;
  const ready = g.getting_ready;
  const banner = $("play-banner");
  banner.className = "banner getting-ready" + (ready.failed ? " failed" : "");
  banner.textContent = ready.failed ? `This game cannot begin: ${ready.message}.`
    : `${ready.message}. The game begins by itself as soon as it is ready.`;
  $("play-sheets").replaceChildren();
  $("play-dice").replaceChildren();
  $("play-roll").textContent = ready.failed ? "Not available" : "Getting ready…";
  $("play-phase").textContent = "";
  $("play-phase").className = "phase";
  $("play-prompt").textContent = ready.failed ? "Start a new game with another bot." : "Waiting for the game to begin…";
  $("play-options").replaceChildren();
  $("coach-panel").hidden = true;
  $("skip").disabled = true;
  renderInfo();
  for (const id of ["download-record", "replay-this"]) $(id).disabled = true;
}

async function sendMove(action) {
  const g = S.game;
  if (!g || S.playing || g.over || g.to_decide !== g.you || sendMove.busy || coverUp()) return;
  sendMove.busy = true;
  try {
    const view = await api("POST", `/api/games/${g.id}/moves`, { seat: g.you, action, decision: g.decisions },
      asSeat(secretOf(g)));
    S.coach = null;
    takeGame(view, true);
  } catch (err) {
    toast(err.message, true);
  } finally {
    sendMove.busy = false;
  }
}

async function loadGame(id) {
  // as the seat this page holds; in hot-seat the one to decide now
  const held = seatsOf(id);
  const seats = Object.keys(held).map(Number);
  try {
    let view = await api("GET", `/api/games/${id}`, undefined, asSeat(held[seats[0]]));
    if (view.to_decide !== view.you && view.to_decide in held) {
      view = await api("GET", `/api/games/${id}`, undefined, asSeat(held[view.to_decide]));
    }
    hideCover();
    S.game = null;
    takeGame(view, false);
    showView("play");
  } catch (err) {
    toast(err.message, true);
    showView("new");
  }
}

async function joinGame(id, secret) {
  // a join link: the page keeps the seat's secret, so the game's plain address rejoins it later
  try {
    const view = await api("GET", `/api/games/${id}`, undefined, asSeat(secret));
    keepSeats(id, { [view.you]: secret });
    hideCover();
    S.game = null;
    takeGame(view, false);
    showView("play");
  } catch (err) {
    toast(`This join link does not open a seat: ${err.message}`, true);
    showView("new");
  }
}

// --- live updates and hot-seat ------------------------------------------------------------

function watchGame(g) {
  // several people at the table: the server says when the game changes, the page then asks
  // for its seat's view (the server is the only authority)
  if (S.source) S.source.close();
  S.source = null;
  if (g.over || g.seats.filter((s) => s.kind !== "bot").length < 2) return;
  const source = new EventSource(`/api/games/${g.id}/events`);
  source.onmessage = (e) => {
    const news = JSON.parse(e.data);
    if (news.over) source.close();
    if (S.game && S.game.id === g.id && news.version > S.game.decisions) refreshGame();
  };
  S.source = source;
}
async function refreshGame() {
  if (refreshGame.busy || coverUp()) { refreshGame.again = !coverUp(); return; }
  const g = S.game;
  refreshGame.busy = true;
  try {
    const view = await api("GET", `/api/games/${g.id}?since=${g.events_total}`, undefined, asSeat(secretOf(g)));
    if (S.game && S.game.id === view.id) takeGame(view, true);
  } catch (err) {
    toast(err.message, true);
  } finally {
    refreshGame.busy = false;
    if (refreshGame.again) { refreshGame.again = false; refreshGame(); }
  }
}
function coverUp() { return !!$("cover") && !$("cover").hidden; }
function hideCover() {
  if ($("cover")) $("cover").hidden = true;
  $("view-play").style.visibility = "";
  delete document.body.dataset.cover;
}
function handOver() {
  // hot-seat: the next decision is another seat this page holds; cover the table (and the
  // last person's pending white choice) until the next person is ready
  const g = S.game;
  if (!g || g.over || S.playing || g.to_decide === null || g.to_decide === g.you || !(g.to_decide in seatsOf(g.id))) return;
  const seat = g.to_decide;
  let cover = $("cover");
  if (!cover) {
    cover = h("div", { id: "cover", class: "cover", role: "dialog", "aria-modal": "true", "aria-labelledby": "cover-title" });
    document.body.append(cover);
  }
  const name = g.seats[seat].name;
  cover.replaceChildren(h("h1", { class: "cover-title", id: "cover-title", text: `Pass to ${name}` }),
    h("p", { text: "The last player's choices stay hidden. Click when ready." }),
    h("button", { type: "button", id: "cover-ready", class: "primary big", text: `I am ${name}: show my sheet`,
      onclick: () => takeSeat(seat) }));
  cover.hidden = false;
  $("view-play").style.visibility = "hidden";
  document.body.dataset.cover = String(seat);
  document.body.dataset.turn = "cover";
}
async function takeSeat(seat) {
  const g = S.game;
  try {
    // the whole game again as this seat sees it: the log must not keep the last person's choice
    const view = await api("GET", `/api/games/${g.id}`, undefined, asSeat(seatsOf(g.id)[seat]));
    hideCover();
    S.coach = null;
    S.game = null;
    takeGame(view, false);
  } catch (err) { toast(err.message, true); }
}
function renderLinks() {
  // the host's join links, one per person playing from their own browser
  const g = S.game;
  let box = $("join-links");
  if (!box) {
    box = h("div", { id: "join-links", class: "card join-links" });
    $("play-sheets").before(box);
  }
  const links = g ? linksOf(g.id) : [];
  box.hidden = !links.length || g.over;
  box.replaceChildren(h("b", { text: "Join links: send each person their own (it opens their seat)" }),
    h("ul", {}, links.map((l) => h("li", { "data-seat": String(l.seat) }, `${l.name} (seat ${l.seat + 1}): `,
      h("a", { href: l.link, class: "join-link", text: l.link }), " ",
      h("button", { type: "button", text: "copy", onclick: () => navigator.clipboard && navigator.clipboard.writeText(l.link) })))));
}

async function refreshGamesList() {
  try {
    const asked = keptSeats();
    const secrets = Object.values(asked).flatMap((x) => Object.values(x.seats)).join(",");
    const data = await api("GET", "/api/games", undefined, { [SEATS_HEADER]: secrets });
    forgetGames(Object.keys(asked), new Set(data.games.map((x) => x.id)));
    const sel = $("games-list");
    sel.replaceChildren(h("option", { value: "", text: `${data.games.length} held (at most ${data.max_games})` }),
      ...data.games.slice().reverse().map((x) => h("option", {
        value: x.id, selected: S.game && x.id === S.game.id, text: gameLabel(x),
      })));
  } catch (err) { /* the list is a convenience */ }
}

// --- a pass that costs a penalty asks once ------------------------------------------------

// Every pick on the table (a cell, an option, a key) comes here: a pass that costs a penalty
// shows a confirmation in place of the options first; the same pass again (its button, P or
// 0) takes it, Back or Escape returns to the options. Anything else is sent at once.
function pickAction(action) {
  const g = S.game;
  const asked = S.confirmPass && S.confirmPass.decisions === g.decisions && S.confirmPass.action === action;
  const pass = !markOfAction(g.sheet, action);
  if (pass && g.pass_penalty && !asked) {
    S.confirmPass = { action, decisions: g.decisions };
    renderTable();
    const yes = document.querySelector(".confirm-pass");
    if (yes) yes.focus();
    return;
  }
  S.confirmPass = null;
  sendMove(action);
}
function cancelPass() {
  if (!S.confirmPass) return false;
  S.confirmPass = null;
  renderTable();
  return true;
}
function confirmingPass(g) {
  return !!S.confirmPass && S.confirmPass.decisions === g.decisions;
}
function penaltyConfirm(g) {
  const player = g.snapshot.players[g.you];
  const n = player.penalties + 1;
  const last = n >= g.sheet.max_penalties;
  const action = S.confirmPass.action;
  return h("div", { class: "confirm", role: "alertdialog", "aria-labelledby": "confirm-text" },
    h("p", { id: "confirm-text" }, h("b", { text: "Pass and take a penalty?" }),
      ` You crossed nothing this roll, so passing costs ${g.sheet.penalty_points} points (penalty ${n} of ${g.sheet.max_penalties}`
      + (last ? ": it ends the game)." : ").")),
    h("div", { class: "confirm-buttons" },
      h("button", { type: "button", class: "confirm-pass danger", "data-action": String(action),
        onclick: () => pickAction(action) }, h("kbd", { text: "P" }), " Take the penalty"),
      h("button", { type: "button", class: "cancel-pass", onclick: cancelPass }, h("kbd", { text: "Esc" }), " Back")));
}

// --- rules and help ------------------------------------------------------------------------

// The help panel is a <dialog> in the page: the button in the top bar or ? opens it, its
// close button or Escape closes it. Wired here, before boot, as it needs nothing from the server.
function openHelp() {
  const d = $("help");
  if (!d.open) d.showModal();
}
function closeHelp() {
  const d = $("help");
  if (d.open) d.close();
}
function setupHelp() {
  $("help-open").addEventListener("click", openHelp);
  $("help-close").addEventListener("click", closeHelp);
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    if (e.key === "?" && !$("help").open) { e.preventDefault(); openHelp(); }
    else if (e.key === "Escape" && !$("help").open && cancelPass()) e.preventDefault();
  });
}

// --- the coach (values per option; filled in by the coach module's API) -------------------

function fmtValue(unit, v) {
  if (unit === "win chance") return `${(100 * v).toFixed(1)}%`;
  return v.toFixed(unit === "points" ? 2 : 1);
}
// An option's loss (the best value less its value: 0 or more, as its column heading says)
function fmtLoss(unit, loss) {
  if (loss < 1e-9) return "0 (best)";
  if (unit === "win chance") return `${(100 * loss).toFixed(1)} pts`;
  return loss.toFixed(unit === "points" ? 2 : 1);
}
function coachByAction(coach) {
  const out = new Map();
  if (!coach || !coach.options) return out;
  const unit = coach.source.unit;
  for (const o of coach.options) {
    const short = unit === "win chance" ? `${Math.round(100 * o.value)}%` : o.value.toFixed(1);
    out.set(o.action, { text: short, full: fmtValue(unit, o.value), best: o.action === coach.best_action });
  }
  return out;
}
async function loadCoach() {
  const g = S.game;
  if (!g || g.over || g.to_decide !== g.you) return;
  const bot = $("coach-bot") ? $("coach-bot").value : "";
  try {
    S.coach = await api("GET", `/api/games/${g.id}/coach${bot ? `?bot=${encodeURIComponent(bot)}` : ""}`, undefined,
      asSeat(secretOf(g)));
  } catch (err) {
    S.coach = { error: err.message };
    sendWhenReady("coach", err, () => { if (S.game === g && $("coach-on").checked) loadCoach(); });
  }
  if (S.game === g && !S.playing) renderTable();
}
function renderCoachPanel(yourTurn) {
  const panel = $("coach-panel");
  const on = $("coach-on").checked;
  panel.hidden = !on;
  if (!on) return;
  panel.replaceChildren(coachTable(S.coach, yourTurn ? "" : "The coach speaks on your turn."));
}
const SOURCE_WORDS = {
  solver: "Exact solo solver",
  afterstate: "Learned win chance (the afterstate network)",
  heuristic: "The heuristic's evaluation (its own points, not a score)",
};
function coachTable(coach, idle) {
  if (!coach) return h("div", { class: "source", text: idle || "The coach is thinking…" });
  if (coach.error) return h("div", { class: "error", text: coach.error });
  const unit = coach.source.unit;
  // the bots that play the table shown: the replay's in the viewer, else the game's
  const rp = document.body.dataset.view === "replay" && S.replay ? S.replay.options : null;
  const table = rp ? [rp.variant, rp.num_players, rp.lucky] : [S.game.options.variant, S.game.options.players, S.game.options.lucky];
  const sheet = rp ? S.replay.sheet : S.game.sheet;
  const bots = (S.info ? S.info.bots : []).filter((b) => fitsTable(b, ...table)).map((b) => b.name);
  const pick = h("select", { id: "coach-bot", "aria-label": "Bot to ask" },
    h("option", { value: "", text: "—" }), bots.map((b) => h("option", { value: b, text: botLabel(b), selected: b === coach.bot })));
  pick.addEventListener("change", () => (document.body.dataset.view === "replay" ? loadReplayCoach() : loadCoach()));
  const rows = coach.options.slice().sort((a, b) => b.value - a.value);
  return h("div", { class: "coach-values", "data-source": coach.source.name },
    h("div", { class: "source" }, h("b", { text: SOURCE_WORDS[coach.source.name] || coach.source.name }),
      `: ${coach.source.quantity} (${unit}); ${coach.source.loss_name}: what the option gives up against the best (best − option).`),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", { colspan: "2", text: "option" }), h("th", { class: "num", text: "value" }),
        h("th", { class: "num", text: coach.source.loss_name }))),
      h("tbody", {}, rows.map((o) => h("tr", {
      class: o.action === coach.best_action ? "best" : "", "data-action": String(o.action), "data-value": String(o.value),
    },
    h("td", {}, chip("chip-mini", sheet, o.mark, o.label)),
    h("td", { text: o.text }),
    h("td", { class: "num", text: fmtValue(unit, o.value) }),
    h("td", { class: "num loss", text: fmtLoss(unit, o.loss) }))))),
    h("div", { class: "bot-ask" }, "What would ", pick, " play? ",
      coach.bot ? h("b", { text: coach.bot_label === "p" ? "pass" : (coach.bot_mark ? markWords(coach.bot_mark) : coach.bot_label) }) : null),
  );
}

// --- after the game ----------------------------------------------------------------------

async function showSummary() {
  const g = S.game;
  const box = $("summary");
  const scores = g.snapshot.players.map((p) => p.score);
  box.replaceChildren(
    h("h2", { text: "Final scores" }),
    h("div", { class: "results" }, g.seats.map((s) => h("span", {
      class: "result" + (g.winners.includes(s.seat) && g.seats.length > 1 ? " win" : ""), "data-seat": String(s.seat),
      text: `${seatName(g, s.seat)}: ${scores[s.seat]}`,
    }))),
    h("div", { id: "summary-coach" }),
    h("div", { class: "info-buttons" },
      h("button", { type: "button", class: "primary", onclick: () => showView("new"), text: "New game" }),
      h("button", { type: "button", onclick: playAgain, text: "Play again (same seed)" }),
      h("button", { type: "button", onclick: downloadRecord, text: "Download record" }),
      h("button", { type: "button", onclick: () => openGameReplay(0), text: "Watch it again" })),
  );
  box.hidden = false;
  try {
    $("summary-coach").textContent = "The coach is reviewing your decisions…";
    renderSummaryCoach(await api("GET", `/api/games/${g.id}/summary`, undefined, asSeat(secretOf(g))));
  } catch (err) {
    $("summary-coach").textContent = `No review: ${err.message}`;
    sendWhenReady("review", err, () => { if (S.game === g) showSummary(); });
  }
}
function renderSummaryCoach(review) {
  const box = $("summary-coach");
  if (!box || !review || !review.decisions) return;
  const unit = review.source.unit;
  const amount = (x) => (unit === "win chance" ? `${(100 * x).toFixed(1)} percentage points of win chance` : `${x.toFixed(unit === "points" ? 2 : 1)} ${unit}`);
  const phase = (d) => (d.phase === "color" ? "colour action" : d.phase === "lucky" ? "lucky cross" : "white action");
  const words = (action) => markWords(markOfAction(S.game.sheet, action));
  box.replaceChildren(
    h("p", {}, `The coach reviewed your ${review.decisions.length} decisions with ${(SOURCE_WORDS[review.source.name] || review.source.name).replace(/^./, (c) => c.toLowerCase())}: `,
      h("b", { text: `total ${review.source.loss_name} ${amount(review.total_loss)}` }), "."),
    review.worst.length ? h("div", {}, h("b", { text: "Your costliest decisions:" }),
      h("ol", { class: "worst" }, review.worst.map((d) => h("li", {},
        `Roll ${d.roll + 1}, ${phase(d)}: you chose ${words(d.action)}, the coach's best was ${words(d.best_action)} (${review.source.loss_name} ${amount(d.loss)})`,
        h("button", { type: "button", class: "show-position", "data-index": String(d.index), onclick: () => openGameReplay(d.index), text: "show the position" }))))) : null,
  );
}

async function downloadRecord() {
  const g = S.game;
  if (!g) return;
  const a = h("a", { href: `/api/games/${g.id}/record`, download: `qwixx-${g.id}.json` });
  document.body.append(a);
  a.click();
  a.remove();
}
async function playAgain() {
  const o = S.game.options;
  const table = { variant: o.variant, lucky: o.lucky, players: o.players, start_player: o.start_player, seed: o.seed };
  const alone = o.seats[0].kind === "human" && o.seats.filter((s) => s.kind === "human").length === 1;
  if (alone) await startGame({ ...table, bots: o.bots }, [0]);
  else await startGame({ ...table, seats: o.seats }, Object.keys(seatsOf(S.game.id)).map(Number));
}
async function openGameReplay(step) {
  try {
    const rec = await api("GET", `/api/games/${S.game.id}/record`);
    await openReplay(rec, step);
  } catch (err) { toast(err.message, true); }
}

// --- new game ----------------------------------------------------------------------------

// the variants the server offers come from /api/info: the package's two are in the page's form,
// a sheet of the user's (qwixx serve --variant FILE) is added to it; nothing here knows a variant by name
function sheetInfo(name) {
  return ((S.info && S.info.sheets) || []).find((s) => s.name === name);
}
function variantTitle(name) {
  const input = document.querySelector(`input[name=variant][value="${CSS.escape(name)}"]`);
  return input ? input.nextElementSibling.firstChild.textContent : name;
}
function addVariantChoices() {
  const row = document.querySelector("input[name=variant]").closest(".choice-row");
  for (const s of S.info.sheets || []) {
    if (document.querySelector(`input[name=variant][value="${CSS.escape(s.name)}"]`)) continue;
    const input = h("input", { type: "radio", name: "variant", value: s.name });
    input.addEventListener("change", renderNewForm);
    row.append(h("label", { class: "pill" }, input, h("span", {}, s.name, h("small", { text: s.about }))));
  }
}
function formValue(name) {
  const el = document.querySelector(`input[name=${name}]:checked`);
  return el ? el.value : null;
}
function fitsTable(bot, variant, players, lucky) {
  // the tables a bot plays come from the bot's own check (/api/info); lucky null: a variant without lucky numbers
  return bot.tables.some((t) => t.variant === variant && t.players === players && (t.lucky === null || t.lucky === lucky));
}
function renderNewForm() {
  if (!S.info) return;
  const variant = formValue("variant") || "classic";
  const lucky = formValue("lucky") || "bonus";
  $("lucky-row").hidden = !(sheetInfo(variant) || {}).lucky_numbers;
  const playersRow = $("players-row");
  if (!playersRow.children.length) {
    for (let p = 1; p <= S.info.max_players; p++) {
      playersRow.append(h("label", { class: "pill" }, h("input", { type: "radio", name: "players", value: String(p), checked: p === 2 }),
        h("span", {}, String(p), h("small", { text: p === 1 ? "solo" : `you + ${p - 1} bot${p > 2 ? "s" : ""}` }))));
    }
    playersRow.addEventListener("change", renderNewForm);
  }
  const players = Number(formValue("players") || 2);
  const old = [...document.querySelectorAll(".seat-bot select")].map((s) => s.value);
  const oldNames = [...document.querySelectorAll(".seat-name")].map((i) => i.value);
  // a seat's name box, shown when another seat is a person's (the table shows the names)
  const nameBox = (s) => h("input", { class: "seat-name", "data-seat": String(s), maxlength: "24", value: oldNames[s] || "",
    placeholder: `Player ${s + 1}`, "aria-label": `Name for seat ${s + 1}` });
  const seats = [h("div", { class: "seat-bot seat-you" }, h("label", {}, "Seat 1", h("span", { text: "You" }), h("small", { text: "you play this sheet" }), nameBox(0)))];
  for (let s = 1; s < players; s++) {
    const choices = S.info.bots.filter((b) => fitsTable(b, variant, players, lucky));
    const preferred = old[s - 1] && (old[s - 1] === HERE || old[s - 1] === LINK || choices.some((b) => b.name === old[s - 1])) ? old[s - 1]
      : (choices.find((b) => b.plays) || choices.find((b) => b.name === "heuristic") || choices[0]).name;
    const sel = h("select", { name: `bot${s}`, "aria-label": `Bot for seat ${s + 1}` },
      choices.map((b) => h("option", { value: b.name, selected: b.name === preferred, text: botLabel(b.name) })),
      h("optgroup", { label: "a person" },
        h("option", { value: HERE, selected: preferred === HERE, text: "a person at this screen" }),
        h("option", { value: LINK, selected: preferred === LINK, text: "a person with a join link" })));
    const note = h("small", {});
    const describeBot = () => {
      const b = S.info.bots.find((x) => x.name === sel.value);
      note.textContent = sel.value === HERE ? "plays on this screen: the page covers the table between people"
        : sel.value === LINK ? "plays from their own browser: you get a link to send"
          : b && b.plays ? `pretrained (PPO) for ${b.plays.variant}${b.plays.lucky ? ` (lucky cross ${b.plays.lucky})` : ""}, ${b.plays.players} players` : BOT_WORDS[sel.value] || "";
    };
    sel.addEventListener("change", () => { describeBot(); showNameBoxes(); });
    describeBot();
    seats.push(h("div", { class: "seat-bot" }, h("label", {}, `Seat ${s + 1}`, sel, note, nameBox(s))));
  }
  $("seat-bots").replaceChildren(...seats);
  showNameBoxes();
  const start = $("start-player");
  const was = start.value;
  start.replaceChildren(h("option", { value: "0", text: "You" }),
    ...Array.from({ length: players - 1 }, (_, i) => h("option", { value: String(i + 1), text: `Seat ${i + 2}` })),
    h("option", { value: "random", text: "Random (from the seed)" }));
  if ([...start.options].some((o) => o.value === was)) start.value = was;
}

function showNameBoxes() {
  // the people's seats get a name box once the table has more than one person
  const person = (v) => v === HERE || v === LINK;
  const people = [...document.querySelectorAll(".seat-bot select")].some((x) => person(x.value));
  document.querySelectorAll(".seat-name").forEach((box) => {
    const at = Number(box.dataset.seat);
    box.hidden = !people || !(at === 0 || person(document.querySelector(`.seat-bot select[name=bot${at}]`).value));
  });
}

async function startGame(body, here) {
  // `here`: the seats played at this screen; the page keeps their secrets, and the join links
  // of the other people's seats to show them
  $("new-error").textContent = "";
  $("start-game").disabled = true;
  try {
    const view = await api("POST", "/api/games", body);
    const kept = {};
    for (const j of view.joins) if (here.includes(j.seat)) kept[j.seat] = j.secret;
    const links = view.joins.filter((j) => !here.includes(j.seat))
      .map((j) => ({ seat: j.seat, name: j.name, link: new URL(j.link, location.href).href }));
    keepSeats(view.id, kept, links);
    hideCover();
    S.game = null;
    showView("play");
    if (view.notice) toast(view.notice);
    takeGame(view, true);
  } catch (err) {
    $("new-error").textContent = err.message;
    toast(err.message, true);
  } finally {
    $("start-game").disabled = false;
  }
}
function submitNew(e) {
  e.preventDefault();
  const players = Number(formValue("players") || 2);
  const seedText = $("seed").value.trim();
  const sp = $("start-player").value;
  const picks = [...document.querySelectorAll(".seat-bot select")].map((s) => s.value);
  const body = {
    variant: formValue("variant"), lucky: formValue("lucky"), players,
    start_player: sp === "random" ? "random" : Number(sp),
    seed: seedText === "" ? null : (/^\d+$/.test(seedText) ? Number(seedText) : seedText),
  };
  const person = (v) => v === HERE || v === LINK;
  if (picks.some(person)) {
    const names = [...document.querySelectorAll(".seat-name")].map((i) => i.value.trim());
    body.seats = [{ kind: "human", name: names[0] || "Player 1" }, ...picks.map((v, i) => (person(v)
      ? { kind: "human", name: names[i + 1] || `Player ${i + 2}` } : { kind: "bot", bot: v }))];
  } else body.bots = picks;
  startGame(body, [0, ...picks.map((v, i) => (v === HERE ? i + 1 : null)).filter((x) => x !== null)]);
}

// --- replay viewer -----------------------------------------------------------------------

async function openReplay(record, step) {
  $("replay-error").textContent = "";
  try {
    const rp = await api("POST", "/api/replays", record);
    S.replay = rp;
    S.rpCoach = null;
    $("rp-slider").max = String(rp.frames.length - 1);
    showView("replay");
    replayGo(step || 0);
  } catch (err) {
    clearReplay();
    $("replay-error").textContent = err.message;
    showView("replay");
  }
}
// What the viewer shows of a replay, emptied: a refused record leaves only its error in view.
function clearReplay() {
  S.replay = null;
  S.rpCoach = null;
  for (const id of ["rp-sheets", "rp-dice", "rp-decision", "rp-coach"]) $(id).replaceChildren();
  for (const id of ["rp-banner", "rp-roll", "rp-phase", "rp-pos"]) $(id).textContent = "";
  $("rp-phase").className = "phase";
  $("rp-slider").max = "0";
  $("rp-slider").value = "0";
  for (const id of ["rp-first", "rp-prev", "rp-next", "rp-last"]) $(id).disabled = true;
}
// The seats' names from the record (its seat_names, as the play page and the arena write
// them); "Player N" only where the record has none. A name held by two seats gets its seat.
function replayNames(rp, players) {
  const given = rp.seat_names;
  return Array.from({ length: players }, (_, s) => {
    if (!given || typeof given[s] !== "string") return `Player ${s + 1}`;
    return given.filter((x) => x === given[s]).length > 1 ? `${given[s]} (seat ${s + 1})` : given[s];
  });
}
function replayGo(step) {
  const rp = S.replay;
  if (!rp) return;
  S.step = Math.max(0, Math.min(rp.frames.length - 1, step));
  S.rpCoach = null;
  renderReplay();
  if ($("rp-coach-on").checked) loadReplayCoach();
}
function renderReplay() {
  const rp = S.replay;
  const f = rp.frames[S.step];
  const snap = f.snapshot;
  const names = replayNames(rp, snap.players.length);
  const pending = new Map();
  for (const p of f.pending) { if (!pending.has(p.seat)) pending.set(p.seat, new Set()); pending.get(p.seat).add(p.action); }
  const values = S.rpCoach && $("rp-coach-on").checked ? coachByAction(S.rpCoach) : null;
  const legal = new Map(f.legal.filter((o) => o.mark).map((o) => [o.action, {
    value: values && values.get(o.action) ? values.get(o.action).text : undefined,
    best: values && values.get(o.action) ? values.get(o.action).best : false,
  }]));
  const made = f.decision && f.decision.mark ? new Set([f.decision.action]) : new Set();
  $("rp-sheets").replaceChildren(...snap.players.map((_, seat) => drawSheet(rp.sheet, snap, seat, {
    name: names[seat],
    badges: [seat === snap.active_player && snap.phase !== "over" ? ["active", "rolls the dice"] : null,
      f.to_decide === seat ? ["thinking", "to decide"] : null].filter(Boolean),
    legal: f.to_decide === seat ? legal : null, pending: pending.get(seat) || null,
    flash: f.to_decide === seat ? made : null, deciding: f.to_decide === seat,
    compact: snap.players.length > 2,
  })));
  drawDice($("rp-dice"), snap, rp.sheet, false);
  $("rp-roll").textContent = `Roll ${snap.roll + 1}`;
  $("rp-phase").textContent = PHASE_WORDS[snap.phase];
  $("rp-phase").className = `phase ${snap.phase}`;
  $("rp-slider").value = String(S.step);
  $("rp-pos").textContent = `position ${S.step} of ${rp.frames.length - 1}`;
  $("rp-banner").textContent = f.decision
    ? `${names[f.decision.seat]} (${PHASE_WORDS[snap.phase].toLowerCase()}) ${f.decision.mark ? `crosses ${markWords(f.decision.mark)}` : "passes"}`
    : `End of the record: ${snap.players.map((p, s) => `${names[s]} ${p.score}`).join(" · ")}`;
  $("rp-decision").textContent = f.decision
    ? `${names[f.decision.seat]} chose: ${f.decision.mark ? `cross ${markWords(f.decision.mark)}` : "pass"}`
    : (snap.phase === "over" ? "The game is over." : "The record stops here.");
  const panel = $("rp-coach");
  panel.hidden = !$("rp-coach-on").checked;
  if (!panel.hidden) panel.replaceChildren(coachTable(S.rpCoach, f.to_decide === null ? "No decision here." : "…"));
  for (const id of ["rp-first", "rp-prev"]) $(id).disabled = S.step === 0;
  for (const id of ["rp-next", "rp-last"]) $(id).disabled = S.step === rp.frames.length - 1;
}
async function loadReplayCoach() {
  const rp = S.replay;
  if (!rp || rp.frames[S.step].to_decide === null) return;
  const bot = $("coach-bot") ? $("coach-bot").value : "";
  const step = S.step;
  try {
    S.rpCoach = await api("GET", `/api/replays/${rp.id}/coach?step=${step}${bot ? `&bot=${encodeURIComponent(bot)}` : ""}`);
  } catch (err) {
    S.rpCoach = { error: err.message };
    sendWhenReady("replay coach", err, () => { if (S.replay === rp && S.step === step && $("rp-coach-on").checked) loadReplayCoach(); });
  }
  if (S.step === step) renderReplay();
}

// --- wiring ------------------------------------------------------------------------------

function onKey(e) {
  if (e.target.closest && e.target.closest("input, select, textarea")) return;
  const view = document.body.dataset.view;
  if (view === "replay" && S.replay) {
    const moves = { ArrowRight: S.step + 1, ArrowLeft: S.step - 1, Home: 0, End: S.replay.frames.length - 1 };
    if (e.key in moves) { e.preventDefault(); replayGo(moves[e.key]); }
    return;
  }
  if (view !== "play" || !S.game || S.game.begun === false || coverUp()) return;
  const k = e.key.toLowerCase();
  if (k === "s") { skipEvents(); return; }
  if (k === "c") { $("coach-on").click(); return; }
  if (S.playing || S.game.over || S.game.to_decide !== S.game.you) return;
  const options = optionKeys(S.game.legal);
  const pick = options.find((o) => o.key.toLowerCase() === k || (k === "0" && o.key === "P"));
  if (pick) { e.preventDefault(); pickAction(pick.action); }
}

async function boot() {
  document.querySelectorAll(".tabs button").forEach((b) => b.addEventListener("click", () => {
    if (b.dataset.view === "play" && !S.game) { toast("Start a game first (or pick one from the list)."); return; }
    showView(b.dataset.view);
  }));
  $("new-form").addEventListener("submit", submitNew);
  document.querySelectorAll("input[name=variant], input[name=lucky]").forEach((el) => el.addEventListener("change", renderNewForm));
  $("skip").addEventListener("click", skipEvents);
  $("coach-on").addEventListener("change", () => { S.coach = null; renderTable(); if ($("coach-on").checked) loadCoach(); });
  $("download-record").addEventListener("click", downloadRecord);
  $("replay-this").addEventListener("click", () => openGameReplay(0));
  $("play-again").addEventListener("click", playAgain);
  $("games-list").addEventListener("focus", refreshGamesList);
  $("games-list").addEventListener("change", (e) => { if (e.target.value) loadGame(e.target.value); });
  $("record-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    const text = await file.text();
    let record;
    try { record = JSON.parse(text); } catch (err) { $("replay-error").textContent = `${file.name}: not JSON (${err.message})`; return; }
    openReplay(record, 0);
  });
  $("rp-first").addEventListener("click", () => replayGo(0));
  $("rp-prev").addEventListener("click", () => replayGo(S.step - 1));
  $("rp-next").addEventListener("click", () => replayGo(S.step + 1));
  $("rp-last").addEventListener("click", () => replayGo(S.replay.frames.length - 1));
  $("rp-slider").addEventListener("input", (e) => replayGo(Number(e.target.value)));
  $("rp-coach-on").addEventListener("change", () => { S.rpCoach = null; renderReplay(); if ($("rp-coach-on").checked) loadReplayCoach(); });
  document.addEventListener("keydown", onKey);
  try {
    S.info = await api("GET", "/api/info");
  } catch (err) {
    toast(`The server does not answer: ${err.message}`, true);
    return;
  }
  addVariantChoices();
  renderNewForm();
  takeReady(S.info.ready || {});
  refreshGamesList();
  const join = location.hash.match(/join=([0-9a-f]+)\.([A-Za-z0-9_-]+)/);
  const m = location.hash.match(/game=([0-9a-f]+)/);
  if (join) joinGame(join[1], join[2]);
  else if (m) loadGame(m[1]);
  else showView("new");
  document.body.dataset.ready = "1";
}

setupHelp();
boot();
