/* bimatrix replay: both payoffs per cell, pure equilibria outlined, the answer and the
   opponent's strategy marked. */
Replay.register("bimatrix", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, fmt = Replay.fmt;
  var A = g.payoff_row || [], B = g.payoff_col || [], pure = {};
  (g.eq_row || []).forEach(function (x, e) {
    var y = (g.eq_col || [])[e] || [], i = x.indexOf(1), j = y.indexOf(1);
    if (i >= 0 && j >= 0) pure[i + "," + j] = true;
  });
  var mine = st.strategy || [], theirs = st.opponent || [];
  var rowS = st.seat === "row" ? mine : theirs, colS = st.seat === "row" ? theirs : mine;
  var t = el("table", {"class": "rp", "aria-label": "payoff matrices"});
  var head = el("tr");
  head.appendChild(el("th", null, "row \\ col"));
  (A[0] || []).forEach(function (_, j) { head.appendChild(el("th", {"class": (colS[j] || 0) > 0 ? "pick" : null}, "col " + (j + 1) + (s > 0 ? " (" + fmt(colS[j], 2) + ")" : ""))); });
  t.appendChild(head);
  A.forEach(function (row, i) {
    var tr = el("tr");
    tr.appendChild(el("th", {"class": (rowS[i] || 0) > 0 ? "pick" : null}, "row " + (i + 1) + (s > 0 ? " (" + fmt(rowS[i], 2) + ")" : "")));
    row.forEach(function (a, j) {
      var cls = [];
      if (pure[i + "," + j]) cls.push("eq");
      if ((rowS[i] || 0) > 0 && (colS[j] || 0) > 0) cls.push("pick");
      tr.appendChild(el("td", cls.length ? {"class": cls.join(" ")} : null, fmt(a, 2) + ", " + fmt((B[i] || [])[j], 2)));
    });
    t.appendChild(tr);
  });
  root.appendChild(t);
  var eqs = (g.eq_row || []).map(function (x, e) { return ["eq" + (e + 1), "row [" + x.map(function (p) { return fmt(p, 2); }).join(", ") + "], col [" + ((g.eq_col || [])[e] || []).map(function (p) { return fmt(p, 2); }).join(", ") + "]; values " + fmt((g.eq_row_value || [])[e], 2) + ", " + fmt((g.eq_col_value || [])[e], 2)]; });
  root.appendChild(Replay.kv(eqs));
  if (s > 0) {
    root.appendChild(Replay.kv([["model", st.model + " as " + st.seat], ["parse status", st.status], ["regret", fmt(st.regret, 4)]]));
    root.appendChild(el("pre", {"class": "raw"}, st.raw));
  }
});
