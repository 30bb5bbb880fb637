/* gama replay: the round's answers seat by seat against the game's reference (the 2/3 target,
   the capacity, the golds, the valuations, the plan), and the history of its key number. */
Replay.register("gama", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, sv = Replay.svg, fmt = Replay.fmt;
  var p = g.params || {}, n = g.players || (g.seats || []).length, game = g.game;
  var BLUE = "#0b5cad", RED = "#a4161a", GREEN = "#1a6b2f", GREY = "#6b7280", INK = "#1b1f24";
  // The rounds up to this step (the end step: all of them).
  var upto = [];
  for (var i = 0; i <= s && i < rep.steps.length; i++) if (rep.steps[i].record) upto.push(rep.steps[i].record);
  var rec = st.record || null, agg = st.agg || {}, moves = st.moves || [];
  var bySeat = {};
  moves.forEach(function (m) { bySeat[m[0] + ":" + m[1]] = m; bySeat[m[0]] = bySeat[m[0]] || m; });
  var winners = rec ? rec.winners || [] : [];
  var isWinner = function (seat) { return winners.indexOf(seat) >= 0; };

  // Bars per seat (values), optional tick per seat (marks), horizontal reference lines.
  function seatChart(label, values, ymax, lines, marks) {
    var W = Math.max(320, 40 * n + 60), H = 220, L = 40, T = 14, B = 30, bw = (W - L - 10) / n;
    ymax = Math.max(ymax || 1, 1);
    values.forEach(function (v) { if (v !== null && v !== undefined && v > ymax) ymax = v; });
    var Y = function (v) { return T + (H - T - B) * (1 - Math.min(v, ymax) / ymax); };
    var c = sv("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": label});
    c.appendChild(sv("line", {x1: L, y1: H - B, x2: W - 6, y2: H - B, stroke: INK}));
    c.appendChild(sv("text", {x: L - 4, y: T + 4, "text-anchor": "end", "font-size": 11}, fmt(ymax, 0)));
    c.appendChild(sv("text", {x: L - 4, y: H - B, "text-anchor": "end", "font-size": 11}, "0"));
    for (var k = 0; k < n; k++) {
      var x = L + k * bw, v = values[k];
      c.appendChild(sv("text", {x: x + bw / 2, y: H - B + 14, "text-anchor": "middle", "font-size": 11}, String(k)));
      if (v === null || v === undefined) {
        c.appendChild(sv("text", {x: x + bw / 2, y: H - B - 4, "text-anchor": "middle", "font-size": 11, fill: RED}, "\u00d7"));
        continue;
      }
      c.appendChild(sv("rect", {x: x + 3, y: Y(v), width: Math.max(2, bw - 6), height: Math.max(0, H - B - Y(v)),
                                fill: isWinner(k) ? GREEN : BLUE, "class": isWinner(k) ? "bar win" : "bar"}));
      if (marks && marks[k] !== null && marks[k] !== undefined)
        c.appendChild(sv("line", {x1: x + 1, x2: x + bw - 1, y1: Y(marks[k]), y2: Y(marks[k]), stroke: RED, "stroke-width": 3, "class": "mark"}));
    }
    (lines || []).forEach(function (ln) {
      if (ln[1] === null || ln[1] === undefined) return;
      c.appendChild(sv("line", {x1: L, x2: W - 6, y1: Y(ln[1]), y2: Y(ln[1]), stroke: ln[2], "stroke-dasharray": "5 3", "stroke-width": 2, "class": "ref"}));
      c.appendChild(sv("text", {x: W - 8, y: Y(ln[1]) - 3, "text-anchor": "end", "font-size": 11, fill: ln[2]}, ln[0] + " " + fmt(ln[1], 2)));
    });
    c.appendChild(sv("text", {x: W / 2, y: H - 2, "text-anchor": "middle", "font-size": 11}, "seat"));
    return c;
  }

  // The key number of every round so far, with the reference it is read against.
  function history(label, key, ymax, ref) {
    var vals = upto.map(key), W = 320, H = 160, L = 40, T = 12, B = 26, total = Math.max(p.rounds || 1, upto.length, 2);
    vals.forEach(function (v) { if (v !== null && v !== undefined && v > ymax) ymax = v; });
    ymax = Math.max(ymax, 1e-9);
    var X = function (t) { return L + (W - L - 10) * (t - 1) / (total - 1); };
    var Y = function (v) { return T + (H - T - B) * (1 - v / ymax); };
    var c = sv("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "history: " + label});
    c.appendChild(sv("line", {x1: L, y1: H - B, x2: W - 6, y2: H - B, stroke: INK}));
    c.appendChild(sv("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: INK}));
    c.appendChild(sv("text", {x: L - 4, y: T + 4, "text-anchor": "end", "font-size": 11}, fmt(ymax, 2)));
    c.appendChild(sv("text", {x: (W + L) / 2, y: H - 4, "text-anchor": "middle", "font-size": 11}, label + " by round"));
    if (ref !== null && ref !== undefined) {
      c.appendChild(sv("line", {x1: L, x2: W - 6, y1: Y(ref[1]), y2: Y(ref[1]), stroke: RED, "stroke-dasharray": "5 3", "class": "ref"}));
      c.appendChild(sv("text", {x: W - 8, y: Y(ref[1]) - 3, "text-anchor": "end", "font-size": 11, fill: RED}, ref[0]));
    }
    var pts = [];
    vals.forEach(function (v, i) { if (v !== null && v !== undefined) pts.push(X(upto[i].round) + "," + Y(v)); });
    if (pts.length) c.appendChild(sv("polyline", {points: pts.join(" "), fill: "none", stroke: BLUE, "stroke-width": 2}));
    vals.forEach(function (v, i) {
      if (v === null || v === undefined) return;
      var last = i === vals.length - 1 && !st.end;
      c.appendChild(sv("circle", {cx: X(upto[i].round), cy: Y(v), r: last ? 5 : 3, fill: last ? GREEN : BLUE}));
    });
    return c;
  }

  // A table of seats: one row per kind of fact, cells classed (pick: winner).
  function seatTable(label, rows) {
    var t = el("table", {"class": "rp", "aria-label": label});
    var head = el("tr");
    head.appendChild(el("th", null, "seat"));
    for (var k = 0; k < n; k++) head.appendChild(el("th", null, String(k)));
    t.appendChild(head);
    rows.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("th", null, r[0]));
      for (var k = 0; k < n; k++) {
        var cell = r[1](k);
        tr.appendChild(el("td", cell[1] ? {"class": cell[1]} : null, cell[0]));
      }
      t.appendChild(tr);
    });
    return t;
  }
  function answerOf(k, role) {
    var m = role ? bySeat[k + ":" + role] : bySeat[k];
    if (!m) return ["-", null];
    if (m[4] !== "ok") return ["invalid (" + m[4] + ")", "bad"];
    return [m[2] === null ? "-" : m[2], isWinner(k) ? "pick" : null];
  }
  function numbers() {
    var out = [];
    for (var k = 0; k < n; k++) { var m = bySeat[k]; out.push(m && m[4] === "ok" ? m[3] : null); }
    return out;
  }
  var payoffRow = ["payoff", function (k) { var m = bySeat[k]; return [m ? fmt(m[5], 2) : "-", null]; }];
  var answerRow = ["answer", function (k) { return answerOf(k); }];
  var row = el("div", {"class": "row"}), left = el("div"), right = el("div"), below = el("div", {style: "overflow-x:auto"});
  var rounds = "round", hist = null;

  if (!st.end && !rec) {  // a round an invalid answer ended: who answered what
    below.appendChild(seatTable("answers", [["answer", function (k) {
      var m = bySeat[k];
      return m ? (m[4] === "ok" ? [m[2], null] : ["invalid (" + m[4] + ")", "bad"]) : ["-", null];
    }]]));
  } else if (st.end) {
    var t = el("table", {"class": "rp", "aria-label": "final standing"}), head = el("tr");
    ["seat", "player", "total payoff", "survived", "rank"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    (st.seats || []).forEach(function (r) {  // [seat, player, total, survived, rank]
      var tr = el("tr");
      tr.appendChild(el("th", null, r[0]));
      tr.appendChild(el("td", null, r[1]));
      tr.appendChild(el("td", null, fmt(r[2], 2)));
      tr.appendChild(el("td", {"class": r[3] ? "good" : "bad"}, r[3] ? "yes" : "no"));
      tr.appendChild(el("td", r[4] === 1 ? {"class": "pick"} : null, r[4]));
      t.appendChild(tr);
    });
    below.appendChild(t);
    below.appendChild(Replay.kv([["GAMA score", fmt(st.score, 2)], ["distance to equilibrium", fmt(st.distance, 3)],
                                ["invalid answers", st.invalid]]));
  } else if (game === "guessing") {
    left.appendChild(seatChart("guesses against the target", numbers(), p.max || 100,
                               [["target", rec.target, GREEN], ["mean", rec.mean_answer, GREY]]));
    below.appendChild(seatTable("guesses", [answerRow, payoffRow]));
  } else if (game === "bar") {
    below.appendChild(seatTable("go or stay", [answerRow, payoffRow]));
    below.appendChild(Replay.kv([["go", agg.go_num + " of " + n], ["go share", fmt(rec.target, 3)], ["capacity", fmt(p.ratio, 3)],
                                ["better choice", agg.winner]]));
  } else if (game === "dollar") {
    left.appendChild(seatChart("bids", numbers(), p.golds || 100, [["fair share", (p.golds || 100) / n, GREY]]));
    below.appendChild(seatTable("bids", [answerRow, payoffRow]));
    below.appendChild(Replay.kv([["sum of bids", fmt(rec.target, 2)], ["golds", p.golds]]));
  } else if (game === "goods") {
    left.appendChild(seatChart("contributions", numbers(), p.tokens || 20, []));
    below.appendChild(seatTable("contributions", [answerRow, payoffRow]));
    below.appendChild(Replay.kv([["pot", fmt(rec.target, 2)], ["multiplier", p.multiplier]]));
  } else if (game === "diner") {
    below.appendChild(seatTable("dishes", [answerRow, payoffRow]));
    below.appendChild(Replay.kv([["cheap", agg.cheap_player + " of " + n], ["total cost", agg.cost_msg || agg.total_cost],
                                ["each pays", fmt(agg.avg_cost, 2)]]));
  } else if (game === "auction") {
    left.appendChild(seatChart("bids against valuations", numbers(), p.valuation_max || 200, [], agg.valuations || []));
    below.appendChild(seatTable("bids", [answerRow,
      ["valuation", function (k) { return [(agg.valuations || [])[k], null]; }], payoffRow]));
    below.appendChild(el("p", {"class": "legend"}, "bars: bids (green: the winner); red ticks: each seat's valuation"));
  } else if (game === "battle") {
    var shooter = parseInt(agg.player_shooting, 10), shot = agg.shot_player, alive = rec.survivors || [];
    var rates = {};
    (agg.initial_players || []).forEach(function (pr) { rates[parseInt(String(pr[0]).replace("player_", ""), 10)] = pr[1]; });
    below.appendChild(seatTable("who shot whom", [
      ["status", function (k) {
        var out = alive.indexOf(k) < 0;
        if (k === shooter) return ["shoots", "pick"];
        if (String(k) === shot) return [agg.out ? "hit, out" : "missed", agg.out ? "enemy" : "own"];
        return [out ? "out" : "alive", out ? "bad" : null];
      }],
      ["hit rate", function (k) { return [rates[k] === undefined ? "-" : rates[k] + "%", null]; }]]));
    below.appendChild(Replay.kv([["shooter", "seat " + agg.player_shooting], ["target", shot === "null" ? "none (into the air)" : "seat " + shot],
                                ["survivors", alive.join(", ")]]));
  } else if (game === "pirate") {
    var proposer = (rec.actors || [])[0];
    left.appendChild(seatChart("the proposer's plan", (agg.gold_distribution || []).slice(0, n), p.gold || 100, []));
    below.appendChild(seatTable("plan and votes", [
      ["gold", function (k) { var v = (agg.gold_distribution || [])[k]; return [v === undefined ? "-" : v, k === proposer ? "pick" : null]; }],
      ["vote", function (k) {
        if (k === proposer) return ["proposes", "pick"];
        var a = answerOf(k, "vote");
        return [a[0], a[0] === "accept" ? "good" : a[0] === "reject" ? "bad" : a[1]];
      }]]));
    below.appendChild(Replay.kv([["proposer", "seat " + proposer], ["accept share", fmt(rec.target, 3)],
                                ["outcome", winners.length ? "passes" : "fails"]]));
    rounds = "proposal";
  }
  // The history of the game's key number, against its reference.
  if (game === "guessing") hist = history("target", function (r) { return r.target; }, p.max || 100, null);
  else if (game === "bar") hist = history("go share", function (r) { return r.target; }, 1, ["capacity " + fmt(p.ratio, 2), p.ratio]);
  else if (game === "dollar") hist = history("sum of bids", function (r) { return r.target; }, 2 * (p.golds || 100), ["golds " + (p.golds || 100), p.golds || 100]);
  else if (game === "goods") hist = history("pot", function (r) { return r.target; }, (p.tokens || 20) * n, null);
  else if (game === "diner") hist = history("cheap share", function (r) { return r.target; }, 1, null);
  else if (game === "auction") hist = history("winning bid", function (r) { return r.target; }, p.valuation_max || 200, null);
  else if (game === "battle") hist = history("survivors", function (r) { return (r.survivors || []).length; }, n, null);
  else if (game === "pirate") hist = history("accept share", function (r) { return r.target; }, 1, ["half", 0.5]);
  moves.forEach(function (m) {  // the raw text of each invalid answer
    if (m[4] === "ok") return;
    below.appendChild(el("p", {"class": "bad"}, "seat " + m[0] + " (" + m[1] + ") answered invalidly (" + m[4] + "):"));
    below.appendChild(el("pre", {"class": "raw"}, m[6] || ""));
  });
  if (left.firstChild) row.appendChild(left);
  if (hist) { right.appendChild(hist); row.appendChild(right); }
  root.appendChild(row);
  root.appendChild(below);
  root.appendChild(el("p", {"class": "legend"}, (st.end ? "end of the game" : rounds + " " + (rec ? rec.round : st.round) + " of " + (rep.steps.length - 1)) +
                      "; " + n + " seats"));
});
