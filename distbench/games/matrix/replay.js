/* matrix replay: the payoff matrix, the equilibrium's support outlined, the answer marked. */
Replay.register("matrix", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, fmt = Replay.fmt;
  var payoff = g.payoff || [], nr = g.nash_row || [], nc = g.nash_col || [];
  var t = el("table", {"class": "rp", "aria-label": "payoff matrix"});
  var head = el("tr");
  head.appendChild(el("th", null, "row \\ col"));
  (payoff[0] || []).forEach(function (_, j) { head.appendChild(el("th", null, "col " + (j + 1) + " (" + fmt(nc[j], 2) + ")")); });
  head.appendChild(el("th", null, "Nash row"));
  if (st.strategy) head.appendChild(el("th", null, "answer"));
  t.appendChild(head);
  payoff.forEach(function (row, i) {
    var tr = el("tr");
    tr.appendChild(el("th", null, "action " + (i + 1)));
    row.forEach(function (v, j) {
      var cls = [];
      if ((nr[i] || 0) > 1e-9 && (nc[j] || 0) > 1e-9) cls.push("eq");
      if (st.decision === i) cls.push("pick");
      tr.appendChild(el("td", cls.length ? {"class": cls.join(" ")} : null, fmt(v, 2)));
    });
    tr.appendChild(el("td", null, fmt(nr[i], 3)));
    if (st.strategy) tr.appendChild(el("td", {"class": (st.strategy[i] || 0) > 0 ? "pick" : null}, fmt(st.strategy[i], 3)));
    t.appendChild(tr);
  });
  root.appendChild(t);
  root.appendChild(el("p", {"class": "legend"}, "game value " + fmt(g.value, 3) + "; outlined cells: the equilibrium's support; highlighted: the model's answer"));
  if (s > 0) {
    var answer = st.decision !== null && st.decision !== undefined ? "action " + (st.decision + 1)
      : st.strategy ? "[" + st.strategy.map(function (p) { return fmt(p, 3); }).join(", ") + "]" : "none (invalid)";
    root.appendChild(Replay.kv([["model", st.model], ["mode", st.mode], ["parse status", st.status || "n/a"],
      ["answer", answer], ["Nash gap", fmt(st.gap, 4)]]));
    root.appendChild(el("pre", {"class": "raw"}, st.raw));
  }
});
