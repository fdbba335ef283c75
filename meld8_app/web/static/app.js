// The Meld8 browser table: draws the states the server reduces from the seat protocol's events
// (meld8_app/web/tableview.py) and sends the human's answers. Plain ES module, no dependencies.
//
// Play: every finished hand stops on a result view (its final table, yaku, han, points, the ledger)
// until a click or a key; results the page has not shown yet are kept in order, so a hand that ended
// between two of your decisions (an opponent's Tenhou right after the deal) is shown too.

const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
// The page's own query string (e.g. ?token=...) goes with every request it makes, whatever it holds.
const QUERY = window.location.search;
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...kids) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== false && v !== null && v !== undefined) node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined && kid !== false) node.append(kid);
  return node;
};
// negative numbers with the minus sign "−", as signed() writes them (a final score read "-17,000" beside "−20,000")
const fmt = (n) => (Number(n) < 0 ? "−" : "") + Math.abs(Number(n)).toLocaleString("en");
const signed = (n) => (n > 0 ? "+" : n < 0 ? "−" : "±") + fmt(Math.abs(n));
// a name two seats share gets its seat, as in the server's words (tableview.unique_names)
const uniq = (names) => names.map((n, s) => (names.filter((x) => x === n).length > 1 ? `${n} (seat ${s})` : n));
const glyph = (c) => (c === "JK" ? "Joker" : (c[0] === "T" ? "10" : c[0]) + SUITS[c[1]]);
// "your 2♥" for the human, "greedy's 2♥" for the others
const whose = (name) => (name === "you" ? "your" : `${name}'s`);
const DORA_TITLE = ": dora (+1 han in a winning hand, R35)";

// -- cards ---------------------------------------------------------------------------------------
function cardNode(card, opts = {}) {
  const tag = opts.onclick ? "button" : "span";
  const cls = ["card", ...(opts.extra ?? [])];
  if (opts.big) cls.push("big");
  let face;
  let title;
  if (card === null) {
    cls.push("back");
    face = [];
    title = "a concealed card";
  } else if (card === "empty") {
    cls.push("empty");
    face = [el("span", { text: "—" })];
    title = "not turned yet";
  } else if (card === "JK") {
    cls.push("joker");
    face = [el("span", { class: "rank", text: "JOKER" }), el("span", { class: "suit", text: "★" })];
    title = "Joker";
  } else {
    if (card[1] === "h" || card[1] === "d") cls.push("red");
    face = [el("span", { class: "rank", text: card[0] === "T" ? "10" : card[0] }), el("span", { class: "suit", text: SUITS[card[1]] })];
    title = glyph(card);
  }
  const node = el(tag, { class: cls.join(" "), "data-card": card ?? "hidden", title: opts.title ?? title }, ...face);
  if (opts.onclick) {
    node.disabled = !opts.enabled;
    node.addEventListener("click", opts.onclick);
    if (opts.actionId !== undefined) node.dataset.actionId = opts.actionId;
  }
  return node;
}

// -- the header (fixed slots: it never changes height or jumps) ---------------------------------
function renderInfo(s, names) {
  const of = s.rounds ? ` of ${s.rounds}` : "";
  const need = s.min_han ? ` · min ${s.min_han} han` : ""; // what a win needs this round (R30)
  $("info-hand").textContent = s.hand ? `Round ${s.round}${of} · hand ${s.hand}${s.replay ? ` (replay ${s.replay})` : ""}${need}` : "";
  $("info-hand").title = s.min_han ? `a win this round needs at least ${s.min_han} han of standard yaku (R30)` : "";
  $("info-dealer").textContent = s.dealer !== null && s.dealer !== undefined ? `dealer: ${names[s.dealer]}` : "";
  $("info-wall").textContent = s.wall_left !== null && s.wall_left !== undefined ? `wall: ${s.wall_left}` : "";
  $("dora-card").replaceChildren(cardNode(s.dora_indicator ?? "empty"));
  $("dora-is").textContent = s.dora ? `dora ${glyph(s.dora)}` : ""; // the state names it (tableview, R35)
}

// -- the table -----------------------------------------------------------------------------------
// Where each seat sits: you at the bottom; the next seat (your shimocha, R6) on the right.
function positions(players, me) {
  const pos = {};
  if (players === 2) {
    pos[me] = "me";
    pos[(me + 1) % 2] = "top";
  } else {
    for (let k = 0; k < players; k++) pos[(me + k) % players] = ["me", "right", "left"][k] ?? "left";
  }
  return pos;
}

// opts: names, me (the seat at the bottom), showAll, onDiscard, result (a finished hand to show), center
function renderTable(s, opts) {
  const { names, me, showAll, result } = opts;
  const t = result ? result.table : s;
  const scores = result?.settlement?.scores ?? s.scores; // a result shows the seats' points after that hand
  const table = $("table");
  table.className = `p${s.players}`;
  table.replaceChildren();
  const req = result ? null : s.request;
  const acting = req ? (req.seat ?? me) : null;
  const win = result?.win ?? null;
  const claimFrom = req && req.phase === "claim" ? req.discarder : null;
  const pos = positions(s.players, me);
  for (let seat = 0; seat < s.players; seat++) {
    const cls = ["seat", `pos-${pos[seat]}`];
    if (acting === seat) cls.push("acting");
    if (win && win.winner === seat) cls.push("winner");
    const box = el("div", { class: cls.join(" "), "data-seat": seat });
    const plate = el("div", { class: "plate" },
      el("span", { class: "name", text: names[seat] }),
      el("span", { class: "seatno", text: `seat ${seat}` }),
      t.dealer === seat ? el("span", { class: "badge", text: "dealer" }) : null,
      el("span", { class: "score", text: `${fmt(scores[seat] ?? 0)} points` }));
    const pond = el("div", { class: "pond", "aria-label": `${names[seat]}'s discards` });
    const pile = t.discards[seat] ?? [];
    pile.forEach((d, i) => {
      const extra = [];
      let title = glyph(d.card);
      if (d.called) { extra.push("called"); title += ": called (it went to a meld)"; }
      if (d.dora) { extra.push("dora"); title += ": the dora indicator"; }
      if (d.won) { extra.push("wincard"); title += ": the winning card"; }
      if (t.latest && t.latest[0] === seat && t.latest[1] === i && !d.won) { extra.push("latest"); title += ": the newest discard"; }
      if (seat === claimFrom && i === pile.length - 1 && !d.called) { extra.push("claim"); title += ": can be claimed now"; }
      pond.append(cardNode(d.card, { extra, title }));
    });
    const row = el("div", { class: "hand-row" });
    const key = String(seat);
    const hand = t.hands[key];
    const own = opts.own === undefined ? me : opts.own; // the seat whose hand is always shown (viewer: none)
    const shown = hand && (seat === own || showAll || (win && win.winner === seat));
    if (seat === me && hand && !result && opts.onDiscard) row.append(renderOwnHand(s, hand, req, opts.onDiscard));
    else if (shown) {
      const cards = el("div", { class: "cards hand", "data-hand": seat });
      for (const c of hand) cards.append(cardNode(c, { big: seat === me, ...doraMark(c, t.dora) }));
      const drawn = t.drawn[key];
      if (drawn) {
        const isWin = win && win.winner === seat && drawn === win.win_card;
        cards.append(cardNode(drawn, { big: seat === me, extra: ["drawn", ...(isWin ? ["wincard"] : [])],
          title: isWin ? `${glyph(drawn)}: the winning card` : `${glyph(drawn)}: just drawn` }));
      }
      row.append(cards);
    } else {
      const n = (t.hand_sizes ?? [])[seat] ?? 0;
      const backs = el("div", { class: "cards backs", "data-backs": n, title: `${n} concealed cards` });
      for (let i = 0; i < n; i++) backs.append(cardNode(null));
      row.append(backs);
    }
    const meld = t.melds[seat] ?? [];
    if (meld.length) {
      const m = el("div", { class: "meld", title: `${names[seat]}'s called meld (R15, R16)` }, el("span", { class: "meld-label", text: "meld" }));
      for (const c of meld) m.append(cardNode(c, { big: seat === me }));
      row.append(m);
    }
    if (pos[seat] === "me") box.append(plate, pond, row);
    else box.append(plate, row, pond);
    table.append(box);
  }
  const center = el("div", { id: "center" });
  if (opts.center) center.append(...opts.center);
  table.append(center);
}

// a card of a shown hand that is the dora: marked, and its title says so
function doraMark(c, dora, extra = [], title = undefined) {
  if (!dora || c !== dora) return { extra, title };
  return { extra: [...extra, "isdora"], title: (title ?? glyph(c)) + DORA_TITLE };
}

function renderOwnHand(s, hand, req, onDiscard) {
  // tabindex -1: the page may rest focus on the row itself (never on a card: Enter would discard it); Tab goes on
  // to the first card
  const row = el("div", { class: "cards hand own", id: "hand", tabindex: "-1" });
  const legal = new Map();
  if (req) for (const a of req.actions) if (a.id < 52) legal.set(a.name.slice(8), a.id);
  const why = (c) => {
    if (legal.has(c)) return `discard ${glyph(c)}`;
    if (c === "JK") return "The Joker cannot be discarded (R12): it stays in your hand until you win";
    if (!req) return `${glyph(c)}: wait for your turn`;
    if (req.phase === "claim") return `${glyph(c)}: answer the claim first (call or pass)`;
    if (req.phase === "call_discard") return `${glyph(c)}: not right after your call (kuikae, R20)`;
    return `${glyph(c)}: not a legal discard now`;
  };
  const add = (c, extra) => row.append(cardNode(c, {
    big: true, ...doraMark(c, s.dora, extra, why(c)), onclick: () => onDiscard(legal.get(c)), enabled: legal.has(c),
    actionId: legal.get(c),
  }));
  for (const c of hand) add(c, []);
  const drawn = s.drawn[String(s.seat)];
  if (drawn) add(drawn, ["drawn"]);
  // a disabled card fires no click, but its pointer events reach the row: say why it cannot go (a phone has no
  // hover to show the title)
  row.addEventListener("pointerup", (e) => {
    const b = e.target.closest("button.card");
    if (b && b.disabled) whyNot(b);
  });
  return row;
}

function whyNot(card) {
  $("last").textContent = card.title;
}

// -- a finished hand: the result view ------------------------------------------------------------
function resultTitle(res, names) {
  const head = `Hand ${res.hand} · round ${res.round}${res.replay ? ` (replay ${res.replay})` : ""}`;
  if (res.win) {
    const w = res.win;
    const who = names[w.winner];
    const verb = who === "you" ? "win" : "wins";
    const how = w.discarder < 0 ? `by Tsumo on ${glyph(w.win_card)}` : `by Ron on ${whose(names[w.discarder])} ${glyph(w.win_card)}`;
    return `${head}: ${who} ${verb} ${how}`;
  }
  if (res.kind === "draw") return `${head}: exhausted wall, the hand is drawn (R14) and the round replayed (R8)`;
  return `${head}: ${names[res.seat]} declared a false win (chombo, R41)`;
}

function resultView(res, s, names, opts = {}) {
  const box = el("section", { id: "result-view", "data-hand": res.hand, "aria-label": "result of the hand" });
  box.append(el("h2", { id: "win", text: resultTitle(res, names) }));
  if (res.win) {
    const w = res.win;
    const dora = res.table ? res.table.dora : s?.dora; // the hand's own (the live state may be the next deal's)
    const groups = el("div", { class: "groups", "aria-label": "the winning hand" });
    for (const g of w.groups) {
      const grp = el("span", { class: "group" });
      let marked = false;
      for (const c of g.split(" ")) {
        const isWin = !marked && c === w.win_card;
        marked ||= isWin;
        grp.append(cardNode(c, doraMark(c, dora, isWin ? ["wincard"] : [], isWin ? `${glyph(c)}: the winning card` : undefined)));
      }
      groups.append(grp);
    }
    if (w.meld) {
      const grp = el("span", { class: "group meld", title: "called meld" }, el("span", { class: "meld-label", text: "called" }));
      for (const c of w.meld.split(" ")) grp.append(cardNode(c, doraMark(c, dora)));
      groups.append(grp);
    }
    box.append(groups);
    if (w.joker_as) {
      box.append(el("p", { text: `The Joker stands for ${glyph(w.joker_as)} (R27: never a card the winner holds; `
        + "a card seen elsewhere does not matter)." }));
    }
    const yaku = el("table", { id: "yaku" }, el("caption", { text: "Yaku and bonuses" }),
      el("tr", {}, el("th", { class: "l", text: "yaku" }), el("th", { text: "han" })));
    for (const [name, han] of w.yaku_names) yaku.append(el("tr", {}, el("td", { class: "l", text: name }), el("td", { text: String(han) })));
    const cols = el("div", { class: "result-cols" }, yaku);
    if (res.settlement) cols.append(ledger(res, s, names, opts.last));
    box.append(el("p", { class: "total", id: "total", text: `${w.han} han · ${fmt(w.points)} points` }), cols);
  } else if (res.settlement) {
    box.append(el("div", { class: "result-cols" }, ledger(res, s, names, opts.last)));
  }
  if (opts.onContinue) {
    box.append(el("button", { class: "continue", id: "result-continue", text: opts.continueText ?? "Continue ▸ (click or any key)",
      onclick: (e) => { e.stopPropagation(); opts.onContinue(); } }));
  }
  return box;
}

// The settlement of one hand per seat; the game's last hand also shows the placement points (R40).
function ledger(res, s, names, last) {
  const st = res.settlement;
  const end = last && s.game_end ? s.game_end : null;
  const head = el("tr", {}, el("th", { class: "l", text: "seat" }), el("th", { text: "before" }),
    el("th", { text: "this hand" }), el("th", { text: "after" }));
  if (end) head.append(el("th", { text: "placement points" }), el("th", { text: "final score" }));
  const t = el("table", { id: "ledger" }, el("caption", { text: "Settlement" }), head);
  for (let seat = 0; seat < st.scores.length; seat++) {
    const p = st.payments[seat];
    const row = el("tr", {}, el("td", { class: "l", text: names[seat] }), el("td", { text: fmt(st.before[seat]) }),
      el("td", { class: p > 0 ? "pos" : p < 0 ? "neg" : "", text: signed(p) }), el("td", { text: fmt(st.scores[seat]) }));
    if (end) row.append(el("td", { text: signed(end.placement_points[seat]) }), el("td", { text: fmt(end.final_scores[seat]) }));
    t.append(row);
  }
  const words = st.transfers.map((x) => `${names[x.from]} ${names[x.from] === "you" ? "pay" : "pays"} ${names[x.to]} ${fmt(x.points)}`);
  t.append(el("tr", {}, el("td", { class: "l", colspan: end ? 6 : 4, text: words.join(" · ") || "nobody pays" })));
  return t;
}

// The game-end panel: its title with the buttons, the final scores, then the notes (how a tie was placed, the saved
// game's commands to paste). Where the panel is short of room (1280x800: a tie in words and long paths) only the notes
// scroll: the scores and the buttons stay in view (scrolling the whole panel took the table's top out of view, and
// with less room its New game button).
function gameEndView(s, names, { buttons = [], notes = [] } = {}) {
  const g = s.game_end;
  const t = el("table", { id: "gameend" },
    el("caption", { text: "Final score = score after the last hand + placement points (R40)" }),
    el("tr", {}, el("th", { class: "l", text: "place" }), el("th", { class: "l", text: "seat" }), el("th", { text: "score" }),
      el("th", { text: "placement points" }), el("th", { text: "final score" })));
  const seats = [...g.placements.keys()].sort((a, b) => g.placements[a] - g.placements[b]);
  for (const seat of seats) {
    t.append(el("tr", {}, el("td", { class: "l", text: String(g.placements[seat]) }), el("td", { class: "l", text: names[seat] }),
      el("td", { text: fmt(g.raw_scores[seat]) }), el("td", { text: signed(g.placement_points[seat]) }),
      el("td", { text: fmt(g.final_scores[seat]) })));
  }
  const me = names.indexOf("you");
  const place = me >= 0 ? ` · you finished ${ordinal(g.placements[me])}` : "";
  // equal raw scores: say how they were placed (R40), or the order looks arbitrary
  const ties = [...new Set(g.raw_scores)].map((v) => seats.filter((x) => g.raw_scores[x] === v)).filter((t) => t.length > 1);
  // who ranks higher is said, not only the rule: "in seat order from the first dealer, defensive" named a seat
  // outside the tie and left the order to the table (a player's walkthrough, session 47)
  const how = (t) => s.placement_tie === "share" ? "they share the placement points of their places (R40)"
    : s.chiicha !== null && s.chiicha !== undefined
      ? `${t.map((x) => names[x]).join(" ahead of ")} (seat order from the first dealer, ${names[s.chiicha]}; R40)` : null;
  const tied = ties.filter((t) => how(t) !== null).map((t) => el("p", { class: "tie",
    text: `${t.map((x) => names[x]).join(" and ")} tied on ${fmt(g.raw_scores[t[0]])} points: ${how(t)}.` }));
  const head = el("div", { class: "gameend-head" }, el("h2", { text: `Game over${place}` }), ...buttons);
  const more = [...tied, ...notes];
  return el("section", { id: "gameend-box" }, head, t, more.length ? el("div", { class: "gameend-notes" }, ...more) : null);
}

const ordinal = (n) => `${n}${{ 1: "st", 2: "nd", 3: "rd" }[n] ?? "th"}`; // places 1-3 (R40)

function resultLine(res, names) {
  if (res.win) {
    const w = res.win;
    return `Hand ${res.hand}: ${names[w.winner]} ${w.discarder < 0 ? "Tsumo" : `Ron on ${names[w.discarder]}`}, ${w.han} han, ${fmt(w.points)}`;
  }
  return res.kind === "draw" ? `Hand ${res.hand}: drawn (exhausted wall)` : `Hand ${res.hand}: chombo by ${names[res.seat]}`;
}

function renderHistory(results, names, onPick) {
  $("history").replaceChildren(...results.map((r, i) => el("li", { "data-result": i, text: resultLine(r, names),
    title: "show this hand's result", onclick: () => onPick(i) })));
}

// The log holds the last lines of the ``said`` said so far: the list starts at the first one's number, so a line keeps
// its number as lines are added (they were numbered from 1 every time). ``cut``: lines left off at the end.
function renderLog(lines, said, cut = 0) {
  const log = $("log");
  log.start = Number.isInteger(said) ? Math.max(said - lines.length + 1, 1) : 1;
  const shown = cut > 0 ? lines.slice(0, Math.max(lines.length - cut, 0)) : lines;
  log.replaceChildren(...shown.map((x) => el("li", { text: x })));
  log.scrollTop = log.scrollHeight;
}

// A result or the game-end panel in the middle of the table must not push your own hand below the window (1280x800
// with two rows of discards): where the felt fills the window, the panel gets the height left and scrolls inside.
// The game-end panel scrolls its notes only, and is never cut shorter than its title, buttons, scores and a line of
// notes: with less room than that the page scrolls instead of hiding the scores.
function fitCenter() {
  const panel = document.querySelector("#center > #result-view, #center > #gameend-box");
  if (!panel) return;
  panel.style.maxHeight = "";
  if (!window.matchMedia("(min-width: 641px)").matches) return; // a phone: the page scrolls, the table is stacked
  const pad = parseFloat(getComputedStyle(document.querySelector("main")).paddingBottom) || 0;
  const over = $("table").getBoundingClientRect().bottom + window.scrollY + pad - window.innerHeight;
  const notes = panel.querySelector(".gameend-notes");
  const least = panel.id !== "gameend-box" ? 160
    : panel.offsetHeight - (notes ? notes.offsetHeight - Math.min(notes.scrollHeight, 48) : 0);
  if (over > 0.5) panel.style.maxHeight = `${Math.max(panel.offsetHeight - over, least)}px`;
}
window.addEventListener("resize", fitCenter);

function showError(message) {
  const box = $("error");
  box.textContent = message ?? "";
  box.hidden = !message;
}

// -- play ----------------------------------------------------------------------------------------
const ACTION_KEYS = { t: [52], r: [53], p: [54, 55, 56, 57, 58, 59], c: [60, 61, 62], x: [63], " ": [63] };

// Which results the page has shown survives a reload and carries to a second tab (localStorage): kept with a
// fingerprint of those results, so another game (whose results differ) starts from zero.
// The fingerprint leads with the game's random id: two games' first results are often alike (a drawn first hand).
const fingerprint = (state, n) =>
  JSON.stringify([state.game_id ?? null, ...state.results.slice(0, n).map((r) => [r.hand, r.kind, r.settlement?.scores])]);
function loadSeen(state) {
  try {
    const saved = JSON.parse(localStorage.getItem("meld8-seen") ?? "null");
    const n = saved?.n;
    if (Number.isInteger(n) && n >= 0 && n <= state.results.length && saved.fp === fingerprint(state, n)) return n;
  } catch { /* storage off or garbage: show every result again */ }
  return 0;
}
function saveSeen(state, n) {
  try { localStorage.setItem("meld8-seen", JSON.stringify({ n, fp: fingerprint(state, n) })); } catch { /* off */ }
}

// What the others did since your last move, in the log's words (their draws left out: they say nothing), oldest
// first; before any move of yours on this page, the last line alone.
function since(state, movedAt) {
  const n = movedAt === null ? 1 : Math.min(state.said - movedAt, state.log.length);
  const lines = state.log.slice(state.log.length - Math.max(n, 1));
  const told = lines.filter((x, i) => i === lines.length - 1 || !/^(?!you ).* draws$/.test(x));
  return told.slice(-5).join(" · ");
}

const RESTARTED = "the table was restarted: this page's link is no longer valid. Open the new link meld8 printed.";

function startPlay() {
  let state = null;
  let socket = null;
  let seen = null; // results shown (acknowledged) so far
  let picked = null; // a past result reopened from the history
  let movedAt = null; // the log's ``said`` when you last moved: the centre says what the others did since
  const send = (msg) => {
    if (document.body.dataset.connection === "refused") return showError(RESTARTED); // no reconnecting: keep saying so
    if (socket.readyState !== WebSocket.OPEN) return showError("not connected: nothing was sent (the page reconnects on its own)");
    socket.send(JSON.stringify(msg));
  };
  const act = (id) => {
    if (id === undefined || !state || !state.request || pending() !== null) return;
    showError(null);
    movedAt = state.said;
    send({ action: id, seq: state.seq, game_id: state.game_id }); // the server refuses a move of another game
  };
  // a discard that passes up a Tsumo waits for a second click (or key) on the same card: one tap threw a win away
  // (a player's walkthrough, session 47)
  const tsumoOffered = () => !!state?.request?.actions.some((a) => a.id === 52);
  let declining = null;
  const discard = (id) => {
    const move = state?.request?.actions.find((a) => a.id === id);
    if (move && tsumoOffered() && declining !== `${state.seq}:${id}`) {
      declining = `${state.seq}:${id}`;
      $("last").textContent = `Your hand wins: press t (Tsumo) to win, or choose ${glyph(move.name.slice(8))} again `
        + "to discard it and play on";
      return;
    }
    declining = null;
    act(id);
  };
  const pending = () => (picked !== null ? picked : state && seen < state.results.length ? seen : null);
  const dismiss = () => {
    if (picked !== null) picked = null;
    else if (seen < state.results.length) { seen += 1; saveSeen(state, seen); }
    draw();
  };
  const newGame = () => send({ new_game: true });
  const connect = () => {
    socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/play${QUERY}`);
    socket.onmessage = (msg) => {
      const data = JSON.parse(msg.data);
      if (data.type === "error") showError(data.message);
      else {
        const fresh = !state || data.state.results.length < seen || data.state.game_id !== state.game_id;
        state = data.state;
        if (seen === null || fresh) seen = loadSeen(state);
        if (picked !== null && picked >= state.results.length) picked = null;
        draw();
      }
    };
    let opened = false;
    socket.onclose = () => {
      document.body.dataset.connection = "lost";
      if (opened) { showError("connection lost: reconnecting…"); setTimeout(connect, 1000); return; }
      // never opened: is the server gone, or did a new one refuse this page's launch token (meld8 restarted)?
      fetch(location.pathname + QUERY, { cache: "no-store" }).then((r) => {
        if (r.status === 403) {
          document.body.dataset.connection = "refused";
          showError(RESTARTED);
        } else { showError("connection lost: reconnecting…"); setTimeout(connect, 1000); }
      }, () => { showError("connection lost: the server is not answering; retrying…"); setTimeout(connect, 2000); });
    };
    socket.onopen = () => { opened = true; document.body.dataset.connection = "open"; showError(null); };
  };
  const draw = () => {
    // a keyboard player's focus stays at the table: the redraw replaces the focused card or button, which sent
    // focus back to the top of the page after every move
    const focused = document.activeElement?.closest?.("#hand, #controls, #center") ? document.activeElement : null;
    drawPlay();
    if (focused && !focused.isConnected) {
      // never on a card: Enter (or space) on a card the page had focused threw it away, a winning hand included.
      // A win offered first, Ron as Tsumo (Enter won a Tsumo and passed a Ron: session 47); in another claim the
      // safe answer: Pass (a second Enter must not call); a result's Continue; else the hand row itself (Tab goes
      // on to the first card)
      const next = document.querySelector('#controls button[data-action-id="53"]')
        ?? document.querySelector('#controls button[data-action-id="52"]')
        ?? document.querySelector('#controls button[data-name="pass"]')
        ?? document.querySelector("#result-continue")
        ?? $("hand");
      if (next) next.focus();
    }
  };
  const drawPlay = () => {
    const names = uniq(state.names);
    const me = state.seat;
    const shown = pending();
    const result = shown !== null ? state.results[shown] : null;
    let ending = null;
    document.body.dataset.seq = String(state.seq); // tests and scripts wait on these
    document.body.dataset.results = String(state.results.length);
    document.body.dataset.seen = String(seen);
    document.body.dataset.view = result ? "result" : state.game_end ? "game-end" : "table";
    renderInfo(result ? { ...state, ...result.table, hand: result.hand, round: result.round, replay: result.replay } : state, names);
    const center = [];
    if (result) {
      const last = shown === state.results.length - 1 && state.game_end !== null;
      const more = state.results.length - 1 - shown;
      const text = picked !== null ? "Back to the table ▸ (click or any key)"
        : more > 0 ? `Next result ▸ (${more} more; click or any key)` : "Continue ▸ (click or any key)";
      center.push(resultView(result, state, names, { last, onContinue: dismiss, continueText: text }));
    } else if (state.game_end) {
      const buttons = [el("button", { class: "continue", id: "new-game-center", text: "New game (n)", onclick: newGame })];
      ending = state.results.at(-1) ?? null; // the table stays as the last hand ended: its winner's cards shown
      const notes = !state.replay_file ? [] : [el("p", { class: "saved", text: `saved: ${state.replay_file}` }),
        el("p", { class: "saved", text: `watch it: meld8 view ${state.replay_file}` }),
        el("p", { class: "saved", text: `review your decisions: meld8 review ${state.replay_file} --seat ${state.seat}` })];
      center.push(gameEndView(state, names, { buttons, notes }));
    } else if (state.request && state.request.phase === "claim") {
      const r = state.request;
      // a Ron offer said what a Pon offer says: only the side panel's button told it was a win (a player's
      // walkthrough, session 47)
      const ron = r.actions.some((a) => a.id === 53);
      center.push(el("div", { class: ron ? "claim-box win-offer" : "claim-box" },
        el("span", { text: `${names[r.discarder]} discards` }), cardNode(r.claim_card, { big: true, extra: ["claim"] }),
        el("span", { text: ron ? "— it wins your hand: Ron (r) or pass (x)?" : "— call it or pass?" })));
    } else if (state.wall_left !== null) {
      center.push(el("div", { class: "center-last", id: "since", text: since(state, movedAt) }),
        el("div", { class: "center-line", text: `${state.wall_left} cards left in the wall` }));
      if (tsumoOffered()) { // said at the table, beside your hand, not only by the side panel's button
        center.push(el("div", { class: "center-line win-offer", id: "tsumo-offer" },
          el("span", { text: "your hand wins: " }),
          el("button", { class: "win", id: "tsumo-center", text: "Tsumo (t)", onclick: () => act(52) }),
          el("span", { text: " or discard to play on" })));
      }
    }
    renderTable(state, { names, me, showAll: false, onDiscard: discard, result: result ?? ending, center });
    fitCenter();
    $("last").textContent = result ? resultLine(result, names) : state.last;
    // while a hand's result waits to be seen, the log stops at that hand's end (the next deal is already in it)
    const after = result && picked === null && result.said !== undefined ? state.said - result.said : 0;
    renderLog(state.log, state.said, after);
    renderHistory(state.results, names, (i) => { picked = i; draw(); });
    const controls = $("controls");
    controls.replaceChildren();
    const req = state.request;
    if (result) {
      const text = picked !== null ? "An earlier hand's result: click or press any key to go back to the table."
        : "The hand is over: look at the result, then click or press any key.";
      controls.append(el("p", { id: "prompt", text }));
    } else if (req) {
      const prompt = req.phase === "claim" ? `${names[req.discarder]} discards ${glyph(req.claim_card)}: call it?` :
        req.phase === "call_discard" ? "Discard after your call (click a card)" :
        req.actions.some((a) => a.id === 52) ? "Your turn: declare Tsumo or click a card to discard" : "Your turn: click a card to discard";
      controls.append(el("p", { id: "prompt", text: prompt }));
      if (req.no_tsumo) controls.append(el("p", { class: "note", id: "no-tsumo", text: req.no_tsumo }));
      for (const a of req.actions) {
        if (a.id < 52) continue;
        const win = a.id === 52 || a.id === 53;
        controls.append(el("button", { class: win ? "win" : "", "data-action-id": a.id, "data-name": a.name,
          text: a.label, onclick: () => act(a.id) }));
      }
    } else if (state.game_end) {
      controls.append(el("button", { id: "new-game", text: "New game", onclick: newGame }));
      if (state.replay_file) controls.append(el("p", { text: `saved: ${state.replay_file} (meld8 view FILE)` }));
    } else {
      controls.append(el("p", { id: "prompt", text: "The others are playing…" }));
    }
  };
  document.addEventListener("keydown", (e) => {
    if (!state || e.ctrlKey || e.metaKey || e.altKey || ["Shift", "Control", "Alt", "Meta", "Tab"].includes(e.key)) return;
    if (pending() !== null) { e.preventDefault(); return dismiss(); }
    if (e.key === "n" && state.game_end) return newGame();
    const want = ACTION_KEYS[e.key];
    // an action key is never also the focused card's or action button's key (space for a Pass not offered clicked
    // the focused card); elsewhere (the words' summary, the new-game button) space keeps its own meaning
    const onAction = document.activeElement?.closest?.("#hand button.card, #controls button[data-action-id]");
    if (want && (onAction || state.request?.actions.some((x) => want.includes(x.id)))) e.preventDefault();
    const req = state.request;
    if (!req) return;
    if (want) {
      const found = req.actions.filter((x) => want.includes(x.id));
      if (found.length === 1) act(found[0].id);
      else if (found.length > 1) $("last").textContent = `${found.length} ways to ${found[0].label.split(" ")[0]}: click the one you want`;
      return;
    }
    const n = Number(e.key);
    if (n >= 1 && n <= 9) {
      const cards = [...document.querySelectorAll("#hand button.card")];
      const b = cards[n - 1];
      if (b && !b.disabled) discard(Number(b.dataset.actionId));
      else if (b) whyNot(b);
    }
  });
  // "click or press any key": a click anywhere closes a result, but not one on the history (it opens another result)
  // or on the page's other controls. The path is the one the click had: the history's redraw detaches its item.
  const own = (n) => n.id === "history" || ["A", "BUTTON", "DETAILS", "INPUT", "SELECT"].includes(n.tagName);
  document.addEventListener("click", (e) => {
    if (state && pending() !== null && !e.composedPath().some(own)) dismiss();
  });
  $("keys").textContent = "keys: 1-9 discard the n-th card · t Tsumo · r Ron · p Pon · c Chii · x or space pass · "
    + "any key or a click closes a result · n new game (once the game is over)";
  connect();
}

// -- view and review -----------------------------------------------------------------------------
const EXPLAIN = [
  ["distance", "how many more cards your hand needs to win after this discard (1: one card from a win, tenpai)."],
  ["acceptance", "how many unseen cards would bring the hand one step closer (more is better)."],
  ["danger", "per opponent: how many live wait shapes (pair, sequence ends, middle) that opponent could be "
    + "waiting in on this card, not ruled out by their own discards (furiten, R33). 0 is safe."],
];

async function startViewer(mode) {
  const data = await (await fetch((mode === "review" ? "/api/review" : "/api/replay") + QUERY)).json();
  if (data.error) return showError(data.error);
  const frames = data.frames;
  // each frame names how many of the hands' results it shows; they are sent once (meld8_app.web.session.pack_frames)
  for (const f of frames) f.results ??= data.results.slice(0, f.results_count);
  const names = uniq(data.names ?? frames[0].names ?? Object.keys(frames[0].hands).map((s) => `seat ${s}`));
  const review = data.review ?? null;
  const decisions = new Map((review?.decisions ?? []).map((d) => [d.index, d]));
  // frame positions: the state before action i is the last plain frame whose index is i
  const posOf = new Map();
  frames.forEach((f, i) => { if (!f.result) posOf.set(f.index, i); });
  const decisionFrames = [...decisions.keys()].map((i) => posOf.get(i)).filter((x) => x !== undefined).sort((a, b) => a - b);
  const resultFrames = frames.map((f, i) => (f.result ? i : -1)).filter((i) => i >= 0);
  const handStarts = [];
  frames.forEach((f, i) => { if (i === 0 || (f.hand !== frames[i - 1].hand && !f.result)) handStarts.push(i); });
  let k = 0;
  let showAll = true;
  const me = review ? review.seat : 0;
  const go = (i) => { k = Math.max(0, Math.min(frames.length - 1, i)); draw(); };
  const hand = (dir) => {
    const cur = handStarts.filter((i) => i <= k).length - 1;
    go(handStarts[Math.max(0, Math.min(handStarts.length - 1, cur + dir))] ?? 0);
  };
  const nextOf = (list, dir) => {
    const cand = dir > 0 ? list.find((i) => i > k) : [...list].reverse().find((i) => i < k);
    if (cand !== undefined) go(cand);
  };
  const controls = $("controls");
  const counter = el("span", { id: "frame" });
  const jump = el("select", { id: "jump", "aria-label": "jump to a hand", onchange: (e) => go(Number(e.target.value)) },
    ...handStarts.map((i, n) => el("option", { value: i, text: `hand ${frames[i].hand || n + 1}` })));
  const all = el("input", { type: "checkbox", id: "show-all", checked: true, onchange: (e) => { showAll = e.target.checked; draw(); } });
  controls.append(
    el("div", { class: "nav" },
      el("button", { id: "prev-hand", text: "« hand", title: "start of the previous hand (↑)", onclick: () => hand(-1) }),
      el("button", { id: "prev", text: "◀ step", title: "one action back (←)", onclick: () => go(k - 1) }),
      el("button", { id: "next", text: "step ▶", title: "one action on (→)", onclick: () => go(k + 1) }),
      el("button", { id: "next-hand", text: "hand »", title: "start of the next hand (↓)", onclick: () => hand(1) }),
      el("button", { id: "next-result", text: "result »", title: "the next hand's ending (r)", onclick: () => nextOf(resultFrames, 1) })),
    el("div", {}, counter, " ", jump, " ", el("label", {}, all, " show all hands")));
  if (review) {
    const s = review.summary;
    const box = $("review");
    const explain = el("dl", { class: "explain", id: "explain" });
    // the words of the review itself, beside the look-ahead's: "ppo", its probability and "flagged" were left
    // unexplained (a player's walkthrough, session 47)
    const th = review.thresholds;
    const words = [
      [review.agent, `the reference agent your decisions are compared with (meld8 review --agent; ppo is the shipped `
        + "network, search the search agent, greedy and defensive the built-in bots)."],
      ["probability / value", "how much the reference likes each option: a network's probability of playing it, or "
        + "a search's mean value over its rollouts (minus the expected final placement: higher is better)."],
      ["flagged", `a decision where the reference rates its own choice more than ${th.probability} probability (or `
        + `${th.value} placements of value) above the move played; a bot, which rates nothing, flags every decision `
        + "where it would play otherwise."],
    ];
    for (const [term, text] of [...words, ...EXPLAIN]) explain.append(el("dt", { text: term }), el("dd", { text }));
    box.append(el("h3", { text: `Review of ${names[review.seat]} (seat ${review.seat}) against ${review.agent}` }),
      el("p", { id: "agreement", text: `${s.decisions} decisions · agreement ${(100 * s.agreement).toFixed(0)}% · ${s.flagged} flagged` }),
      el("div", { class: "nav" },
        el("button", { class: "btn", id: "prev-decision", text: "◀ previous decision", title: "the seat's previous decision (p)", onclick: () => nextOf(decisionFrames, -1) }),
        el("button", { class: "btn", id: "next-decision", text: "next decision of this seat ▶", title: "the seat's next decision (n)", onclick: () => nextOf(decisionFrames, 1) })),
      el("div", { id: "decision" }));
    const list = el("ol", { id: "flagged" });
    for (const d of review.decisions.filter((x) => x.flagged)) {
      // the hand and the phase first, as the text review says them: "action 25" alone placed nothing (session 47)
      list.append(el("li", {}, el("span", { class: "decision flag", text: `hand ${d.hand} (${d.phase}), action ${d.index}: played ${d.played.label ?? d.played.name}; ${review.agent} would ${d.reference.label ?? d.reference.name}`,
        onclick: () => { go(posOf.get(d.index)); reveal(true); } })));
    }
    box.append(el("h4", { text: "Flagged decisions" }), list, el("h4", { text: "What the numbers mean" }), explain);
  }
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") go(k + 1);
    else if (e.key === "ArrowLeft") go(k - 1);
    else if (e.key === "ArrowDown" || e.key === "PageDown") hand(1);
    else if (e.key === "ArrowUp" || e.key === "PageUp") hand(-1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(frames.length - 1);
    else if (e.key === "r") nextOf(resultFrames, 1);
    else if (review && e.key === "n") nextOf(decisionFrames, 1);
    else if (review && e.key === "p") nextOf(decisionFrames, -1);
    else return;
    e.preventDefault();
    if (["Home", "End", "n", "p"].includes(e.key)) reveal();
  });
  $("keys").textContent = "keys: ← → one action · ↑ ↓ one hand · r next result · Home End" + (review ? " · n p next / previous decision" : "");
  const draw = () => {
    const f = frames[k];
    document.body.dataset.frame = String(k);
    document.body.dataset.view = f.result ? "result" : f.game_end ? "game-end" : "table";
    counter.textContent = `action ${f.index} / ${frames.at(-1).index}${f.result ? " · result" : ""}`;
    jump.value = String(handStarts.filter((i) => i <= k).at(-1) ?? 0);
    const result = f.result ? f.results.at(-1) : null;
    renderInfo(result ? { ...f, ...result.table } : f, names);
    const center = [];
    const isLast = k === frames.length - 2 && frames.at(-1).game_end !== null; // the game's last hand
    if (result) center.push(resultView(result, isLast ? { ...f, game_end: frames.at(-1).game_end } : f, names, { last: isLast }));
    else if (f.game_end) center.push(gameEndView(f, names));
    else if (f.request && f.request.phase === "claim") {
      center.push(el("div", { class: "claim-box" }, el("span", { text: `${names[f.request.discarder]} discards` }),
        cardNode(f.request.claim_card, { big: true, extra: ["claim"] }), el("span", { text: "— under claim" })));
    } else if (f.wall_left !== null) {
      center.push(el("div", { class: "center-last", text: f.last }),
        el("div", { class: "center-line", text: `${f.wall_left} cards left in the wall` }));
    }
    renderTable(f, { names, me, own: review ? me : null, showAll, result, center });
    fitCenter();
    $("last").textContent = f.last;
    renderLog(f.log, f.said);
    renderHistory(f.results, names, (i) => go(resultFrames[i]));
    if (review) renderDecision(decisions.get(f.result ? -1 : f.index), review.agent, names, review.seat);
  };
  draw();
}

// After a jump (a flagged decision clicked far down the side panel, Home, End, n, p) the side panel shows its top
// part again: the step buttons, the review's buttons and the decision (they stayed scrolled out of view). Where the
// panel scrolls on its own (a wide window) only it moves: the decision's bottom in view, the buttons' top first when
// both cannot be. On a narrow window (the panel below the table) the page moves, for a click in the panel only
// (``page``): a key must not carry the page away from the table.
function reveal(page = false) {
  const aside = document.querySelector("aside");
  const controls = $("controls");
  if (getComputedStyle(aside).overflowY === "visible") {
    if (page) controls.scrollIntoView({ block: "start" });
    return;
  }
  const box = aside.getBoundingClientRect();
  const bottom = ($("decision") ?? controls).getBoundingClientRect().bottom;
  const top = controls.getBoundingClientRect().top;
  let by = Math.max(bottom - box.bottom, 0);
  if (top - by < box.top) by = top - box.top;
  aside.scrollTop += by;
}

function renderDecision(d, agent, names, seat) {
  const box = $("decision");
  box.replaceChildren();
  if (!d) return box.append(el("p", { text: `step to a decision of ${names[seat]} ("next decision" or a flagged one below)` }));
  const said = (a) => a.label ?? a.name;
  box.append(el("p", { class: d.flagged ? "flag" : "", text: `Decision at action ${d.index}: played ${said(d.played)}; ${agent} would ${said(d.reference)}` }));
  // a network reference gives each option's probability, a search its mean rollout value (review.py): the column
  // says which, and the reference's own choice is marked (a search keeps its first choice unless another is
  // clearly better on the same worlds, so its choice need not be the top value)
  const valued = d.options.some((o) => o.value !== undefined && o.value !== null);
  const head = valued
    ? el("th", { text: `${agent} value`, title: "mean value over the search's rollouts, higher is better (by default minus the expected final placement)" })
    : el("th", { text: `${agent} probability` });
  const t = el("table", { class: "options" }, el("tr", {}, el("th", { class: "l", text: "action" }), head));
  const sign = (v) => (v < 0 ? "−" : "+") + Math.abs(v).toFixed(2);
  for (const o of d.options.slice(0, 8)) {
    const mine = o.id === d.reference.id;
    const name = said(o) + (o.id === d.played.id ? " (played)" : "") + (mine ? ` ← ${agent}` : "");
    let cell;
    if (valued) cell = el("td", { text: o.value === undefined || o.value === null ? "" : sign(o.value) });
    else {
      const bar = el("span", { class: "bar", style: `width:${o.p === null ? 0 : Math.round(50 * o.p)}px` });
      cell = el("td", {}, bar, " ", o.p === null ? "" : `${(100 * o.p).toFixed(0)}%`);
    }
    t.append(el("tr", { class: mine ? "ref" : "" }, el("td", { class: "l", text: name }), cell));
  }
  box.append(el("div", { class: "scroll-x" }, t)); // a wide table scrolls in its own box (the page never does)
  if (valued && d.options.length && d.options[0].id !== d.reference.id) {
    box.append(el("p", { class: "note", text: `${agent} keeps its first choice unless another is clearly better on the same sampled `
      + "worlds (the margin rule), so its move need not be the top value." }));
  }
  if (!d.discards.length && d.options.some((o) => o.name === "pass")) {
    box.append(el("p", { class: "note", id: "claim-note", text: "A claim: the look-ahead table is for discards. Step on "
      + "(→) to see the hand after the call and the discard it leads to." }));
  }
  if (d.discards.length) {
    const opponents = d.discards[0].danger.map((_, j) => names[(seat + 1 + j) % names.length]);
    const la = el("table", { class: "lookahead", id: "lookahead" }, el("caption", { text: "After each discard (see below for the terms)" }),
      el("tr", {}, el("th", { class: "l", text: "discard" }), el("th", { text: "distance", title: EXPLAIN[0][1] }),
        el("th", { text: "acceptance", title: EXPLAIN[1][1] }),
        ...opponents.map((n) => el("th", { text: `danger: ${n}`, title: EXPLAIN[2][1] }))));
    for (const x of d.discards) {
      la.append(el("tr", { class: x.id === d.played.id ? "played" : "" }, el("td", { class: "l", text: glyph(x.card) + (x.id === d.played.id ? " (played)" : "") }),
        el("td", { text: String(x.distance) }), el("td", { text: String(x.acceptance) }),
        ...x.danger.map((v) => el("td", { text: String(v) }))));
    }
    box.append(el("div", { class: "scroll-x" }, la));
  }
}

const config = await (await fetch("/api/config" + QUERY)).json();
document.body.dataset.mode = config.mode;
if (config.mode === "play") startPlay();
else startViewer(config.mode);
