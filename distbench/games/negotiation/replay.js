/* negotiation replay: items and valuations, the latest proposals, the split vs the Pareto frontier. */
Replay.register("negotiation", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, sv = Replay.svg, fmt = Replay.fmt;
  var row = el("div", {"class": "row"});
  var t = el("table", {"class": "rp", "aria-label": "items"});
  var head = el("tr");
  ["item", "count", "value to a", "value to b", "a asks", "b asks"].forEach(function (h) { head.appendChild(el("th", null, h)); });
  t.appendChild(head);
  (g.items || []).forEach(function (name, i) {
    var tr = el("tr");
    tr.appendChild(el("th", null, name));
    tr.appendChild(el("td", null, g.counts[i]));
    tr.appendChild(el("td", null, g.values_a[i]));
    tr.appendChild(el("td", null, g.values_b[i]));
    tr.appendChild(el("td", st.prop_a ? {"class": "pick"} : null, st.prop_a ? st.prop_a[i] : "-"));
    tr.appendChild(el("td", st.prop_b ? {"class": "pick"} : null, st.prop_b ? st.prop_b[i] : "-"));
    t.appendChild(tr);
  });
  var left = el("div");
  left.appendChild(t);
  left.appendChild(Replay.kv([["seat a", g.player_a], ["seat b", g.player_b]]));
  row.appendChild(left);
  // Every split's scores (grey), the frontier (green line), the outcome (black ring).
  var pts = g.points || [], W = 260, H = 260, P = 34, mx = 1, my = 1;
  pts.forEach(function (p) { mx = Math.max(mx, p[0]); my = Math.max(my, p[1]); });
  var X = function (v) { return P + (W - 2 * P) * v / mx; }, Y = function (v) { return H - P - (H - 2 * P) * v / my; };
  var c = sv("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "scores of every split and the Pareto frontier"});
  c.appendChild(sv("line", {x1: P, y1: H - P, x2: W - P / 2, y2: H - P, stroke: "#1b1f24"}));
  c.appendChild(sv("line", {x1: P, y1: H - P, x2: P, y2: P / 2, stroke: "#1b1f24"}));
  c.appendChild(sv("text", {x: W / 2, y: H - 6, "text-anchor": "middle", "font-size": 12}, "score a"));
  c.appendChild(sv("text", {x: 12, y: H / 2, "font-size": 12, transform: "rotate(-90 12 " + H / 2 + ")", "text-anchor": "middle"}, "score b"));
  pts.forEach(function (p) { c.appendChild(sv("circle", {cx: X(p[0]), cy: Y(p[1]), r: 2.5, fill: "#6b7280"})); });
  var fr = (g.frontier || []).map(function (p) { return X(p[0]) + "," + Y(p[1]); }).join(" ");
  c.appendChild(sv("polyline", {points: fr, fill: "none", stroke: "#1a6b2f", "stroke-width": 2}));
  if (st.final) c.appendChild(sv("circle", {cx: X(st.final[0]), cy: Y(st.final[1]), r: 7, fill: "none", stroke: "#a4161a", "stroke-width": 3, "class": "final"}));
  var right = el("div");
  right.appendChild(c);
  right.appendChild(el("p", {"class": "legend"}, "grey: every split; green: the Pareto frontier; red ring: the final split"));
  row.appendChild(right);
  root.appendChild(row);
  if (st.text !== undefined) {
    root.appendChild(el("p", {"class": st.status === "proposal" || st.status === "message" ? "good" : "bad"}, "seat " + st.player + " says (" + st.status + "):"));
    root.appendChild(el("pre", {"class": "raw"}, st.text));
  }
  if (st.final !== undefined) root.appendChild(Replay.kv([["main score", fmt(st.main_score, 1)]]));
});
