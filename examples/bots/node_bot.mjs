#!/usr/bin/env node
// A Meld8 bot speaking the seat protocol (docs/protocol.md) in Node.js, no packages needed.
//
// Run it in a tournament:  meld8 tournament --agents "cmd:node examples/bots/node_bot.mjs",greedy,defensive
//
// Policy (deterministic, the same as python_bot.py): win whenever allowed; Pon a crown card (A, J, Q,
// K: a value triplet scores a han); pass on every other claim;
// otherwise discard the card with the fewest partners in hand (same rank, or same suit one or two
// ranks apart), preferring among equals a rank already discarded at the table, then the higher card.
// It plays any number of games at once: all state is kept per game id.

const RANKS = "A23456789TJQK";
const seen = new Map(); // game id -> Set of ranks seen discarded

function parse(card) {
  return card === "JK" ? null : { rank: RANKS.indexOf(card[0]) + 1, suit: card[1] };
}

function choose(request, seenRanks) {
  const ids = new Map(request.actions.map((a) => [a.name, a.id]));
  for (const win of ["tsumo", "ron"]) if (ids.has(win)) return ids.get(win);
  if (request.phase === "claim") {
    const pons = request.actions.filter((a) => a.name.startsWith("pon"));
    return pons.length && "AJQK".includes(request.claim_card[0]) ? pons[0].id : ids.get("pass");
  }
  const hand = [...ids.keys()].filter((n) => n.startsWith("discard ")).map((n) => parse(n.split(" ")[1]));
  const partners = (card) => {
    let score = 0;
    for (const other of hand) {
      if (other === card) continue;
      const gap = Math.abs(other.rank - card.rank);
      if (gap === 0) score += 3;
      else if (other.suit === card.suit && gap <= 2) score += 3 - gap;
    }
    return score;
  };
  let best = null;
  let bestKey = null;
  for (const card of hand) {
    const key = [partners(card), seenRanks.has(card.rank) ? 0 : 1, -card.rank];
    if (best === null || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] ||
        (key[1] === bestKey[1] && key[2] < bestKey[2])))) {
      best = card;
      bestKey = key;
    }
  }
  return ids.get("discard " + RANKS[best.rank - 1] + best.suit);
}

function onEvent(ev) {
  const game = ev.game;
  switch (ev.type) {
    case "game_start":
    case "hand_start":
      seen.set(game, new Set());
      return null;
    case "discard": {
      const card = parse(ev.card);
      if (card !== null) {
        if (!seen.has(game)) seen.set(game, new Set());
        seen.get(game).add(card.rank);
      }
      return null;
    }
    case "game_end":
    case "fault":
      seen.delete(game);
      return null;
    case "request":
      // echo the request's number: meld8 then tells a late answer from a new one
      return { game, action: choose(ev, seen.get(game) ?? new Set()), ...("seq" in ev ? { seq: ev.seq } : {}) };
    default:
      return null;
  }
}

let rest = "";
let greeted = false;
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop();
  const answers = [];
  for (const line of lines) {
    const ev = JSON.parse(line);
    if (!greeted) {
      if (ev.protocol !== 1) {
        process.stderr.write(`node_bot speaks protocol 1, the server ${ev.protocol}\n`);
        process.exit(1);
      }
      greeted = true;
      answers.push(JSON.stringify({ type: "hello", protocol: 1, name: "node_bot" }));
      continue;
    }
    if (ev.type === "bye") process.exit(0);
    const answer = onEvent(ev);
    if (answer !== null) answers.push(JSON.stringify(answer));
  }
  // one write per batch of requests (the server sends many games' requests together)
  if (answers.length) process.stdout.write(answers.join("\n") + "\n");
});
process.stdin.on("end", () => process.exit(0));
