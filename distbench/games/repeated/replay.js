/* repeated replay: the timeline of both players' moves, the current round marked. */
Replay.register("repeated", function (root, rep, s) {
  var g = rep.static, st = rep.steps[s], el = Replay.el, fmt = Replay.fmt;
  var name = function (a) { return a === 0 ? "C" : a === 1 ? "D" : "-"; };
  var t = el("table", {"class": "rp", "aria-label": "timeline"});
  var rows = [["round", null], [g.model, 1], [g.opponent, 2], ["payoff", 3]];
  var total = 0;
  rows.forEach(function (spec) {
    var tr = el("tr");
    tr.appendChild(el("th", null, spec[0]));
    g.rounds.forEach(function (r, i) {
      if (i >= st.upto) return;
      var cls = i === st.upto - 1 ? "pick" : null;
      var v = spec[1] === null ? r[0] : spec[1] === 3 ? fmt(r[3], 2) : name(r[spec[1]]);
      if (spec[1] === 1 || spec[1] === 2) cls = (cls ? cls + " " : "") + (r[spec[1]] === 1 ? "enemy" : "own");
      tr.appendChild(el("td", cls ? {"class": cls} : null, v));
    });
    t.appendChild(tr);
  });
  g.rounds.forEach(function (r, i) { if (i < st.upto && r[3] !== null) total += r[3]; });
  root.appendChild(t);
  root.appendChild(el("p", {"class": "legend"}, "C: cooperate, D: defect; " + st.upto + " of " + g.planned + " rounds"));
  root.appendChild(Replay.kv([["model's total so far", fmt(total, 2)]].concat(st.end ? [["regret", fmt(g.regret, 3)]] : [])));
});
