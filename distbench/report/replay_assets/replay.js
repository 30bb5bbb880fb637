/* distbench replay shell: steps, play, keys and the #r=<replay>&s=<step> link. */
"use strict";
var Replay = (function () {
  var draws = {}, data = null, r = 0, s = 0, timer = null;
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    if (attrs) { for (var k in attrs) e.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function kv(rows) {
    var d = el("dl", {"class": "kv"});
    rows.forEach(function (p) { d.appendChild(el("dt", null, p[0])); d.appendChild(el("dd", null, p[1])); });
    return d;
  }
  function fmt(x, digits) {
    if (x === null || x === undefined) return "n/a";
    if (typeof x !== "number") return String(x);
    return String(Math.round(x * Math.pow(10, digits === undefined ? 3 : digits)) / Math.pow(10, digits === undefined ? 3 : digits));
  }
  function register(family, draw) { draws[family] = draw; }
  function current() { return data.replays[r]; }
  function show(push) {
    var rep = current(), n = rep.steps.length;
    s = Math.max(0, Math.min(s, n - 1));
    var stage = $("stage");
    while (stage.firstChild) stage.removeChild(stage.firstChild);
    stage.setAttribute("data-replay", rep.id);
    stage.setAttribute("data-step", String(s));
    draws[data.family](stage, rep, s);
    $("scrub").max = String(n - 1);
    $("scrub").value = String(s);
    $("where").textContent = "step " + (s + 1) + " / " + n;
    $("caption").textContent = rep.steps[s].label || "";
    $("pick").value = String(r);
    var hash = "#r=" + encodeURIComponent(rep.id) + "&s=" + s;
    $("link").setAttribute("href", hash);
    if (push && location.hash !== hash) history.replaceState(null, "", hash);
  }
  function go(step) { s = step; show(true); }
  function stop() { if (timer) { clearInterval(timer); timer = null; $("play").textContent = "play"; } }
  function play() {
    if (timer) { stop(); return; }
    if (s >= current().steps.length - 1) s = 0;
    $("play").textContent = "pause";
    timer = setInterval(function () {
      if (s >= current().steps.length - 1) { stop(); return; }
      go(s + 1);
    }, 900);
    show(true);
  }
  function fromHash() {
    var h = {}, parts = location.hash.replace(/^#/, "").split("&");
    parts.forEach(function (p) { var i = p.indexOf("="); if (i > 0) h[p.slice(0, i)] = decodeURIComponent(p.slice(i + 1)); });
    if (h.r !== undefined) {
      for (var i = 0; i < data.replays.length; i++) { if (data.replays[i].id === h.r) r = i; }
    }
    s = h.s !== undefined && /^\d+$/.test(h.s) ? parseInt(h.s, 10) : 0;
  }
  function start() {
    data = JSON.parse($("replay-data").textContent);
    var pick = $("pick");
    data.replays.forEach(function (rep, i) { pick.appendChild(el("option", {value: String(i)}, rep.title)); });
    fromHash();
    pick.addEventListener("change", function () { stop(); r = parseInt(pick.value, 10); go(0); });
    $("first").addEventListener("click", function () { stop(); go(0); });
    $("last").addEventListener("click", function () { stop(); go(current().steps.length - 1); });
    $("back").addEventListener("click", function () { stop(); go(s - 1); });
    $("fwd").addEventListener("click", function () { stop(); go(s + 1); });
    $("play").addEventListener("click", play);
    $("scrub").addEventListener("input", function () { stop(); go(parseInt($("scrub").value, 10)); });
    document.addEventListener("keydown", function (e) {
      if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT")) return;
      if (e.key === "ArrowRight") { stop(); go(s + 1); }
      else if (e.key === "ArrowLeft") { stop(); go(s - 1); }
      else if (e.key === "Home") { stop(); go(0); }
      else if (e.key === "End") { stop(); go(current().steps.length - 1); }
      else if (e.key === " ") { e.preventDefault(); play(); }
      else return;
    });
    window.addEventListener("hashchange", function () { stop(); fromHash(); show(false); });
    show(false);
    document.body.setAttribute("data-ready", "1");
  }
  return {register: register, start: start, el: el, svg: svg, kv: kv, fmt: fmt};
})();
