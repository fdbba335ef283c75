// The Meld8 browser table: draws the states the server reduces from the seat protocol's events
// (meld8_app/web/tableview.py) and sends the human's answers. Plain ES module, no dependencies.

const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...kids) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== false && v !== null && v !== undefined) node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) if (kid) node.append(kid);
  return node;
};

// -- cards ---------------------------------------------------------------------------------------
function cardNode(card, opts = {}) {
  const tag = opts.onclick ? "button" : "span";
  const cls = ["card"];
  if (opts.small) cls.push("small");
  if (opts.extra) cls.push(...opts.extra);
  let face;
  if (card === null) {
    cls.push("back");
    face = [el("span", { text: "" })];
  } else if (card === "JK") {
    cls.push("joker");
    face = [el("span", { text: "JK" }), el("span", { text: "★" })];
  } else {
    const rank = card[0] === "T" ? "10" : card[0];
    if (card[1] === "h" || card[1] === "d") cls.push("red");
    face = [el("span", { text: rank }), el("span", { text: SUITS[card[1]] })];
  }
  const node = el(tag, { class: cls.join(" "), "data-card": card ?? "hidden", title: card ?? "hidden card" }, ...face);
  if (opts.onclick) {
    node.disabled = !opts.enabled;
    node.addEventListener("click", opts.onclick);
    if (opts.actionId !== undefined) node.dataset.actionId = opts.actionId;
  }
  return node;
}

// -- the table -----------------------------------------------------------------------------------
function renderInfo(s, names) {
  const info = $("info");
  info.replaceChildren(
    el("span", { text: s.hand ? `Round ${s.round} · hand ${s.hand}${s.replay ? ` (replay ${s.replay})` : ""}` : "" }),
    el("span", { text: s.dealer !== null ? `dealer: ${names[s.dealer]}` : "" }),
    el("span", { text: s.wall_left !== null ? `wall: ${s.wall_left}` : "" }),
  );
  const dora = el("span", { text: "dora indicator: " });
  dora.append(s.dora_indicator ? cardNode(s.dora_indicator, { small: true }) : "—");
  info.append(dora);
}

function renderTable(s, opts) {
  const { names, me, showAll, onDiscard } = opts;
  const table = $("table");
  table.replaceChildren();
  const req = s.request;
  const acting = req ? (req.seat ?? me) : null;
  const order = [];
  for (let k = 1; k <= s.players; k++) order.push(me === null ? k - 1 : (me + k) % s.players);
  for (const seat of order) {
    const box = el("div", { class: "seat" + (acting === seat ? " acting" : ""), "data-seat": seat });
    const head = el("h2", {},
      el("span", { text: `${names[seat]} (seat ${seat})${s.dealer === seat ? " · dealer" : ""}` }),
      el("span", { class: "score", text: `${(s.scores[seat] ?? 0).toLocaleString("en")} points` }));
    box.append(head);
    const discards = el("div", { class: "row discards" }, el("span", { class: "label", text: "discards" }));
    for (const d of s.discards[seat] ?? []) {
      const extra = [];
      if (d.called) extra.push("called");
      if (d.dora) extra.push("dora");
      discards.append(cardNode(d.card, { small: true, extra }));
    }
    box.append(discards);
    const meld = s.melds[seat] ?? [];
    if (meld.length) {
      const row = el("div", { class: "row meld" }, el("span", { class: "label", text: "meld" }));
      for (const c of meld) row.append(cardNode(c, { small: true }));
      box.append(row);
    }
    const hand = s.hands[String(seat)];
    const visible = hand && (seat === me || showAll || me === null && showAll);
    if (seat === me && hand) box.append(renderOwnHand(s, hand, req, onDiscard));
    else if (visible) {
      const row = el("div", { class: "row hand" }, el("span", { class: "label", text: "hand" }));
      for (const c of hand) row.append(cardNode(c, { small: true }));
      const drawn = s.drawn[String(seat)];
      if (drawn) row.append(cardNode(drawn, { small: true, extra: ["drawn"] }));
      box.append(row);
    }
    table.append(box);
  }
}

function renderOwnHand(s, hand, req, onDiscard) {
  const row = el("div", { class: "row hand own", id: "hand" }, el("span", { class: "label", text: "your hand" }));
  const legal = new Map();
  if (req) for (const a of req.actions) if (a.name.startsWith("discard ")) legal.set(a.name.slice(8), a.id);
  const add = (c, extra) => row.append(cardNode(c, {
    extra, onclick: () => onDiscard(legal.get(c)), enabled: legal.has(c), actionId: legal.get(c),
  }));
  for (const c of hand) add(c, []);
  const drawn = s.drawn[String(s.seat)];
  if (drawn) add(drawn, ["drawn"]);
  return row;
}

// -- results: the win, the settlement ledger, the game end ----------------------------------------
function renderResult(s, names) {
  const box = $("result");
  box.replaceChildren();
  const res = s.results.at(-1);
  if (res) {
    box.append(el("h3", { text: `Last hand: hand ${res.hand} (round ${res.round})` }));
    if (res.win) {
      const w = res.win;
      const how = w.discarder < 0 ? "Tsumo" : `Ron on ${names[w.discarder]}`;
      box.append(el("p", { id: "win", text: `${names[w.winner]} wins by ${how}: ${w.han} han, ${w.points.toLocaleString("en")} points` }));
      const cards = el("div", { class: "row" });
      for (const g of w.groups) {
        for (const c of g.split(" ")) cards.append(cardNode(c, { small: true }));
        cards.append(el("span", { text: " " }));
      }
      box.append(cards);
      const yaku = [...w.yaku.map(([n, h]) => `${n} ${h}`), ...Object.entries(w.bonuses).map(([n, h]) => `${n} bonus ${h}`)];
      box.append(el("p", { text: `yaku: ${yaku.join(", ") || "—"}${w.joker_as ? ` · Joker as ${w.joker_as}` : ""}` }));
    } else if (res.kind === "draw") {
      box.append(el("p", { text: "Exhausted wall: the hand is drawn and the round is replayed (R39)." }));
    } else {
      box.append(el("p", { text: `${names[res.seat]} declared a false win (chombo, R41).` }));
    }
    if (res.settlement) box.append(ledger(res.settlement, names));
  }
  if (s.game_end) {
    const t = el("table", { id: "gameend" }, el("tr", {}, el("th", { class: "l", text: "place" }),
      el("th", { class: "l", text: "seat" }), el("th", { text: "final score" })));
    const seats = [...s.game_end.placements.keys()].sort((a, b) => s.game_end.placements[a] - s.game_end.placements[b]);
    for (const seat of seats) {
      t.append(el("tr", {}, el("td", { class: "l", text: String(s.game_end.placements[seat]) }),
        el("td", { class: "l", text: names[seat] }), el("td", { text: s.game_end.final_scores[seat].toLocaleString("en") })));
    }
    box.append(el("h3", { text: "Game over" }), t);
  }
}

function ledger(st, names) {
  const t = el("table", { id: "ledger" }, el("caption", { text: "settlement: who paid whom" }),
    el("tr", {}, el("th", { class: "l", text: "from" }), el("th", { class: "l", text: "to" }), el("th", { text: "points" })));
  if (!st.transfers.length) t.append(el("tr", {}, el("td", { class: "l", colspan: 3, text: "nobody pays" })));
  for (const x of st.transfers) {
    t.append(el("tr", {}, el("td", { class: "l", text: names[x.from] }), el("td", { class: "l", text: names[x.to] }),
      el("td", { text: x.points.toLocaleString("en") })));
  }
  const pay = el("tr", {}, el("th", { class: "l", text: "change", colspan: 2 }),
    el("td", { text: st.payments.map((p) => (p > 0 ? "+" : "") + p.toLocaleString("en")).join(" / ") }));
  t.append(pay);
  return t;
}

function showError(message) {
  const box = $("error");
  box.textContent = message ?? "";
  box.hidden = !message;
}

// -- play ----------------------------------------------------------------------------------------
const ACTION_KEYS = { t: "tsumo", r: "ron", p: "pon", c: "chii", x: "pass", " ": "pass" };

function startPlay() {
  let state = null;
  let socket = null;
  const send = (msg) => socket.send(JSON.stringify(msg));
  const act = (id) => {
    if (id === undefined || !state || !state.request) return;
    showError(null);
    send({ action: id, seq: state.seq });
  };
  const connect = () => {
    socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/play`);
    socket.onmessage = (msg) => {
      const data = JSON.parse(msg.data);
      if (data.type === "error") showError(data.message);
      else { state = data.state; draw(); }
    };
    socket.onclose = () => { showError("connection lost: reconnecting…"); setTimeout(connect, 1000); };
    socket.onopen = () => showError(null);
  };
  const draw = () => {
    const names = state.names;
    document.body.dataset.seq = String(state.seq); // tests and scripts wait on it
    renderInfo(state, names);
    renderTable(state, { names, me: state.seat, showAll: false, onDiscard: act });
    $("last").textContent = state.last;
    renderResult(state, names);
    const controls = $("controls");
    controls.replaceChildren();
    const req = state.request;
    if (req) {
      const prompt = req.phase === "claim" ? `${names[req.discarder]} discards ${req.claim_card}:` :
        req.phase === "call_discard" ? "discard after your call:" : "your turn: click a card to discard";
      controls.append(el("p", { id: "prompt", text: prompt }));
      for (const a of req.actions) {
        if (a.name.startsWith("discard ")) continue;
        const win = a.name === "tsumo" || a.name === "ron";
        controls.append(el("button", { class: win ? "win" : "", "data-action-id": a.id, "data-name": a.name,
          text: a.name, onclick: () => act(a.id) }));
      }
    } else if (state.game_end) {
      controls.append(el("button", { id: "new-game", text: "new game", onclick: () => send({ new_game: true }) }));
      if (state.replay_file) controls.append(el("p", { text: `saved: ${state.replay_file} (meld8 view FILE)` }));
    }
  };
  document.addEventListener("keydown", (e) => {
    if (!state) return;
    if (e.key === "n" && state.game_end) return send({ new_game: true });
    const req = state.request;
    if (!req) return;
    const want = ACTION_KEYS[e.key];
    if (want) {
      const a = req.actions.find((x) => x.name.startsWith(want));
      if (a) { e.preventDefault(); act(a.id); }
      return;
    }
    const n = Number(e.key);
    if (n >= 1 && n <= 9) {
      const cards = [...document.querySelectorAll("#hand button.card")];
      const b = cards[n - 1];
      if (b && !b.disabled) act(Number(b.dataset.actionId));
    }
  });
  $("keys").textContent = "keys: 1-9 discard the n-th card · t tsumo · r ron · p pon · c chii · x or space pass · n new game";
  connect();
}

// -- view and review -----------------------------------------------------------------------------
async function startViewer(mode) {
  const data = await (await fetch(mode === "review" ? "/api/review" : "/api/replay")).json();
  if (data.error) return showError(data.error);
  const frames = data.frames;
  const names = data.names ?? Object.keys(frames[0].hands).map((s) => `seat ${s}`);
  const review = data.review ?? null;
  const decisions = new Map((review?.decisions ?? []).map((d) => [d.index, d]));
  const handStarts = [];
  frames.forEach((f, i) => { if (i === 0 || f.hand !== frames[i - 1].hand) handStarts.push(i); });
  let k = 0;
  let showAll = true;
  let me = review ? review.seat : null;
  const go = (i) => { k = Math.max(0, Math.min(frames.length - 1, i)); draw(); };
  const hand = (dir) => {
    const cur = handStarts.filter((i) => i <= k).length - 1;
    go(handStarts[Math.max(0, Math.min(handStarts.length - 1, cur + dir))] ?? 0);
  };
  const controls = $("controls");
  const counter = el("span", { id: "frame" });
  const jump = el("select", { id: "jump", onchange: (e) => go(Number(e.target.value)) },
    ...handStarts.map((i, n) => el("option", { value: i, text: `hand ${frames[i].hand || n + 1}` })));
  const all = el("input", { type: "checkbox", id: "show-all", checked: true, onchange: (e) => { showAll = e.target.checked; draw(); } });
  controls.append(
    el("button", { id: "prev-hand", text: "« hand", onclick: () => hand(-1) }),
    el("button", { id: "prev", text: "◀ step", onclick: () => go(k - 1) }),
    el("button", { id: "next", text: "step ▶", onclick: () => go(k + 1) }),
    el("button", { id: "next-hand", text: "hand »", onclick: () => hand(1) }),
    el("div", {}, counter, " ", jump),
    el("label", {}, all, " show all hands"));
  if (review) {
    const s = review.summary;
    const box = $("review");
    box.append(el("h3", { text: `Review of seat ${review.seat} against ${review.agent}` }),
      el("p", { id: "agreement", text: `${s.decisions} decisions · agreement ${(100 * s.agreement).toFixed(0)}% · ${s.flagged} flagged` }),
      el("div", { id: "decision" }));
    const list = el("ol", { id: "flagged" });
    for (const d of review.decisions.filter((x) => x.flagged)) {
      list.append(el("li", {}, el("span", { class: "decision flag", text: `action ${d.index}: played ${d.played.name}, ${review.agent}: ${d.reference.name}`,
        onclick: () => go(d.index) })));
    }
    box.append(el("h4", { text: "flagged decisions" }), list);
  }
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") go(k + 1);
    else if (e.key === "ArrowLeft") go(k - 1);
    else if (e.key === "ArrowDown" || e.key === "PageDown") hand(1);
    else if (e.key === "ArrowUp" || e.key === "PageUp") hand(-1);
  });
  $("keys").textContent = "keys: ← → one action · ↑ ↓ one hand";
  const draw = () => {
    const f = frames[k];
    document.body.dataset.frame = String(k);
    counter.textContent = `action ${k} / ${frames.length - 1}`;
    jump.value = String(handStarts.filter((i) => i <= k).at(-1) ?? 0);
    renderInfo(f, names);
    renderTable(f, { names, me: null, showAll, onDiscard: () => {} });
    const a = f.action;
    $("last").textContent = a ? `${names[a.seat]}: ${a.name} — ${f.last}` : f.last;
    renderResult(f, names);
    if (review) renderDecision(decisions.get(k), review.agent);
  };
  draw();
}

function renderDecision(d, agent) {
  const box = $("decision");
  box.replaceChildren();
  if (!d) return box.append(el("p", { text: "step to a decision of this seat (flagged ones are listed below)" }));
  box.append(el("p", { class: d.flagged ? "flag" : "", text: `decision at action ${d.index}: played ${d.played.name}; ${agent} would ${d.reference.name}` }));
  const t = el("table", { class: "options" }, el("tr", {}, el("th", { class: "l", text: "action" }), el("th", { text: `${agent} p` })));
  for (const o of d.options.slice(0, 8)) {
    const p = o.p === null ? "" : `${(100 * o.p).toFixed(0)}%`;
    const bar = el("span", { class: "bar", style: `width:${o.p === null ? 0 : Math.round(60 * o.p)}px` });
    t.append(el("tr", {}, el("td", { class: "l", text: o.name + (o.id === d.played.id ? " (played)" : "") }), el("td", {}, bar, " ", p)));
  }
  box.append(t);
  if (d.discards.length) {
    const la = el("table", { class: "lookahead" }, el("tr", {}, el("th", { class: "l", text: "discard" }),
      el("th", { text: "distance" }), el("th", { text: "acceptance" }), el("th", { text: "danger per opponent" })));
    for (const x of d.discards) {
      la.append(el("tr", {}, el("td", { class: "l", text: x.card }), el("td", { text: String(x.distance) }),
        el("td", { text: String(x.acceptance) }), el("td", { text: x.danger.join(" / ") })));
    }
    box.append(el("h4", { text: "look-ahead after each discard" }), la);
  }
}

const config = await (await fetch("/api/config")).json();
document.body.dataset.mode = config.mode;
if (config.mode === "play") startPlay();
else startViewer(config.mode);
