/* openspiel replay: the board (a grid) or the hands and pot (OpenSpiel's text) before each
   move, the move and its regret against the reference. */
Replay.register("openspiel", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, fmt = Replay.fmt;
  var row = el("div", {"class": "row"});
  var left = el("div");
  if (st.state && st.state.grid) {
    var t = el("table", {"class": "rp board", "aria-label": "board"});
    st.state.grid.forEach(function (line) {
      var tr = el("tr");
      line.split("").forEach(function (ch) { tr.appendChild(el("td", {"class": ch === "x" ? "own" : ch === "o" ? "enemy" : null}, ch === "." ? "" : ch)); });
      t.appendChild(tr);
    });
    left.appendChild(t);
  } else if (st.state) {
    left.appendChild(el("pre", {"class": "raw", "aria-label": "state: cards and pot"}, st.state.text));
  } else {
    left.appendChild(el("p", {"class": "legend"}, "state not rebuilt (OpenSpiel is not installed)"));
  }
  row.appendChild(left);
  var right = el("div");
  if (st.move !== undefined) {
    right.appendChild(Replay.kv([["move", st.move || "none"], ["parse status", st.status],
      ["regret (" + g.reference + ")", fmt(st.regret, 3)], ["best value", fmt(st.best, 3)], ["its value", fmt(st.value, 3)],
      ["legal moves", (st.legal || []).join(", ")]]));
    if (st.regret !== null && st.regret !== undefined) right.appendChild(el("p", {"class": st.regret > 1e-9 ? "bad" : "good"}, st.regret > 1e-9 ? "a costly move" : "a best move"));
    if (st.raw) right.appendChild(el("pre", {"class": "raw"}, st.raw));
  } else {
    right.appendChild(Replay.kv([["outcome of " + g.player_a, st.outcome_a || "n/a"], ["its mean regret", fmt(st.regret_a, 3)]]));
  }
  row.appendChild(right);
  root.appendChild(row);
});
