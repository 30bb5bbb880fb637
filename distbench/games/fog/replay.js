/* fog replay: each side's view of the board (enemy powers hidden: its belief shown), the
   turn's events (scout reports, fights), beliefs and orders. */
Replay.register("fog", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, fmt = Replay.fmt;
  function top(belief) {  // belief: probabilities of powers 1..5
    if (!belief) return null;
    var best = 0;
    for (var i = 1; i < belief.length; i++) if (belief[i] > belief[best]) best = i;
    return [best + 1, belief[best]];
  }
  function board(me) {
    var box = el("div");
    box.appendChild(el("h3", null, "as " + "ab"[me] + " (" + g.agents[me] + ") sees it"));
    if (!st.board) { box.appendChild(el("p", {"class": "legend"}, "board not rebuilt (see the page's note)")); return box; }
    var cells = {}, side = st.sides[me] || {};
    [0, 1].forEach(function (p) {
      st.board.pos[p].forEach(function (xy, i) {
        if (!st.board.alive[p][i]) return;
        var label;
        if (p === me) label = "ab"[p] + (i + 1) + ":" + g.powers[p][i] + (g.sovereigns[p] === i ? "\u2605" : "");
        else {
          var t = top(side.beliefs ? side.beliefs[i] : null);
          label = "ab"[p] + (i + 1) + ":" + (t ? "~" + t[0] + " " + Math.round(t[1] * 100) + "%" : "?");
        }
        cells[xy[0] + "," + xy[1]] = (cells[xy[0] + "," + xy[1]] ? cells[xy[0] + "," + xy[1]] + " " : "") + label;
        cells["p" + xy[0] + "," + xy[1]] = p === me ? "own" : "enemy";
      });
    });
    var t = el("table", {"class": "rp board", "aria-label": "board as " + "ab"[me] + " sees it"});
    for (var r = 0; r < g.n; r++) {
      var tr = el("tr");
      for (var c = 0; c < g.n; c++) {
        var k = r + "," + c;
        tr.appendChild(el("td", {"class": cells["p" + k] ? (cells["p" + k] === "own" ? "own" : "enemy fog") : null}, cells[k] || ""));
      }
      t.appendChild(tr);
    }
    box.appendChild(t);
    if (side.orders) box.appendChild(Replay.kv([["orders", side.orders.join(", ")], ["report", side.status || "n/a"], ["Brier", fmt(side.brier, 3)]]));
    return box;
  }
  if (!g.rebuilt) root.appendChild(el("p", {"class": "bad"}, "The board could not be rebuilt from the stored orders (an agent deploying its own way, or rules not at their defaults): reports and events only."));
  var row = el("div", {"class": "row"});
  row.appendChild(board(0));
  row.appendChild(board(1));
  root.appendChild(row);
  root.appendChild(el("p", {"class": "legend"}, "own forces: name:power (\u2605 sovereign); enemy forces: their power is hidden, shown as the viewer's belief (most likely power, its probability)"));
  var ev = el("div");
  ev.appendChild(el("h3", null, "events (scout reports, fights)"));
  var ul = el("ul");
  (st.events.length ? st.events : ["none"]).forEach(function (e) { ul.appendChild(el("li", null, e)); });
  ev.appendChild(ul);
  root.appendChild(ev);
});
