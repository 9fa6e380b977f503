package main

import (
	"io"
	"net/http"
)

// adminPage is the page an operator keeps open during a cutover. Its
// first screen answers three questions: is anything disagreeing right
// now, how far is each scope rolled out, and which legacy rules can go.
// It is a shell that reads the JSON API (adminapi.go) and draws it,
// again every few seconds; it loads nothing from elsewhere: its style and
// script are inline, its time series inline SVG, and its
// Content-Security-Policy allows nothing else.
type adminPage struct{}

func (adminPage) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, adminHTML)
}

// adminRefresh is how often the page reads the API again, in milliseconds.
const adminRefresh = "5000"

const adminHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>orderly: cutover</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.2em 1.5em;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 .2em}h2{font-size:16px;margin:1.4em 0 .4em}
.meta{color:#5b6475}.bad{color:#b3261e;font-weight:600}.ok{color:#1e7b34;font-weight:600}
#summary{font-size:15px;margin:.6em 0;padding:.5em .8em;background:#fff;box-shadow:0 0 0 1px #dde1e8}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 0 0 1px #dde1e8}
th,td{padding:3px 8px;border-bottom:1px solid #e6e9ef;text-align:left;vertical-align:top}
th{background:#eef1f6;white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px}a{color:#1a4fa0}
tr.section td{background:#eef1f6;font-weight:600;border-top:2px solid #c9d0dc}
tr.setting td{color:#5b6475}tr.default td{color:#5b6475;font-style:italic}
.v{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;white-space:nowrap}
.v-needed{background:#e3f1e6;color:#1e5b2c}.v-can-go{background:#fdecea;color:#8c1d18}.v-dead{background:#fbd5d1;color:#8c1d18}
.v-demoted{background:#fff3c4;color:#6b5200}.v-section-needed{background:#e3f1e6;color:#1e5b2c}.v-section-can-go{background:#fdecea;color:#8c1d18}.v-with-section,.v-not-seen{background:#eef1f6;color:#3b4354}
.newly-deny{color:#8c1d18}.newly-allow{color:#b3261e;font-weight:600}
input{font:inherit;padding:4px 8px;width:28em;margin:0 .6em .5em 0}
.trail{font-size:12px;color:#3b4354;white-space:pre-wrap;margin:.3em 0}
svg.spark{display:block}details summary{cursor:pointer}
</style></head>
<body>
<h1>orderly</h1>
<div class="meta">generation <b id="generation">…</b> · loaded <span id="loaded"></span> · <span id="reload"></span> · updated <span id="updated"></span></div>
<div id="summary">loading…</div>

<h2>Scopes</h2>
<table id="scopes"><thead><tr><th>scope</th><th>host</th><th>path</th><th>mode</th><th>enforces</th><th>shadows</th><th>enforce share</th><th>requests (1 h)</th><th>disagreements (1 h)</th><th>last hour: requests, <span class="bad">disagreements</span>, <span class="ok">enforce share</span></th></tr></thead><tbody></tbody></table>

<h2>Disagreements</h2>
<p class="meta" id="no-disagreements" hidden>No disagreement since orderly started.</p>
<table id="disagreements"><thead><tr><th>scope</th><th>against</th><th>direction</th><th>rule</th><th>count</th><th>first</th><th>last</th><th>generation</th><th>sample</th></tr></thead><tbody></tbody></table>

<h2>Rules, by section</h2>
<input id="filter" type="search" placeholder="filter: rule ID, file, directive, verdict, section" aria-label="filter rules">
<span class="meta" id="shown"></span> <span class="meta" id="since"></span>
<table id="rules"><thead><tr><th>rule</th><th>where</th><th>directive</th><th>hits</th><th>decisive</th><th>necessary</th><th>last hit</th><th>verdict</th><th>explain</th></tr></thead></table>

<script>
(function(){
"use strict";
var REFRESH = ` + adminRefresh + `;
var open = {};   // the <details> the operator opened, by key
function el(tag, attrs, kids){
  var e = document.createElement(tag);
  for (var k in attrs||{}) { if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]); }
  (kids||[]).forEach(function(c){ if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
  return e;
}
function td(v, cls){ return el("td", cls ? {"class": cls, text: String(v)} : {text: String(v)}); }
function when(s){ return s ? s.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") : "never"; }
function get(path){ return fetch(path, {cache: "no-store"}).then(function(r){ if (!r.ok) throw new Error(path + ": " + r.status); return r.json(); }); }
function pct(f){ return (Math.round(f*100)/100) + "%"; }
function verdict(v, why){
  if (!v) return el("span");
  return el("span", {"class": "v v-" + v.replace(/ /g, "-"), title: why||"", text: v});
}
function details(key, summary, body){
  var d = el("details", {}, [el("summary", {text: summary}), body]);
  if (open[key]) d.open = true;
  d.addEventListener("toggle", function(){ open[key] = d.open; });
  return d;
}

// spark draws a scope's last hour: requests as a line, disagreements as
// bars, the enforce share as a step line on its own 0-100% scale.
function spark(series){
  var W = 280, H = 44, ns = "http://www.w3.org/2000/svg";
  var svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark"); svg.setAttribute("width", W); svg.setAttribute("height", H);
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  var n = series.length, max = 1;
  series.forEach(function(p){ max = Math.max(max, p.requests, p.disagreements); });
  var x = function(i){ return n < 2 ? W - 2 : 2 + i * (W - 4) / (n - 1); };
  var y = function(v){ return H - 2 - v * (H - 4) / max; };
  var add = function(tag, attrs){ var e = document.createElementNS(ns, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); svg.appendChild(e); return e; };
  add("rect", {x: 0, y: 0, width: W, height: H, fill: "#f6f8fb"});
  var bw = Math.max(1, (W - 4) / Math.max(n, 1) - 1);
  series.forEach(function(p, i){ if (p.disagreements > 0) add("rect", {"class": "dis", x: x(i) - bw/2, y: y(p.disagreements), width: bw, height: H - 2 - y(p.disagreements), fill: "#d93025"}); });
  var req = [], share = [];
  series.forEach(function(p, i){
    req.push(x(i) + "," + y(p.requests));
    var sy = H - 2 - p.percent * (H - 4) / 100;
    if (i > 0) share.push(x(i) + "," + (H - 2 - series[i-1].percent * (H - 4) / 100));
    share.push(x(i) + "," + sy);
  });
  if (n === 1) { req.unshift("2," + req[0].split(",")[1]); share.unshift("2," + share[0].split(",")[1]); }
  add("polyline", {"class": "share", points: share.join(" "), fill: "none", stroke: "#1e7b34", "stroke-width": 1.5, "stroke-dasharray": "4 2"});
  add("polyline", {"class": "requests", points: req.join(" "), fill: "none", stroke: "#1a4fa0", "stroke-width": 1.5});
  var t = document.createElementNS(ns, "title");
  t.textContent = n + " steps; peak " + max + " a step";
  svg.appendChild(t);
  return svg;
}

function status(s){
  document.getElementById("generation").textContent = s.generation;
  document.getElementById("loaded").textContent = when(s.loaded);
  var r = document.getElementById("reload");
  r.className = s.reload_ok ? "ok" : "bad";
  r.textContent = s.reload_ok ? "last reload succeeded" : "last reload failed: " + s.reload_error;
  document.getElementById("updated").textContent = when(s.now);
}

function drawScopes(d){
  var body = document.querySelector("#scopes tbody");
  body.textContent = "";
  d.scopes.forEach(function(s){
    body.appendChild(el("tr", {"data-scope": s.name}, [td(s.name), td(s.host || "any"), td(s.path || "any"), td(s.mode), td(s.enforce), td(s.shadow || "none"),
      td(s.mode === "enforce" ? pct(s.percent) : "0% (" + s.mode + ")", "num"), td(s.hour_requests, "num"), td(s.hour_disagreements, "num" + (s.hour_disagreements ? " bad" : "")), el("td", {}, [spark(s.series)])]));
  });
}

function decision(x){
  if (!x) return "";
  return x.policy + ": " + x.decision + (x.status ? " " + x.status : "") + (x.rule_id ? " by " + x.rule_id + " " + x.rule : "");
}
function drawDisagreements(d){
  var body = document.querySelector("#disagreements tbody");
  body.textContent = "";
  document.getElementById("no-disagreements").hidden = d.groups.length > 0;
  document.getElementById("disagreements").hidden = d.groups.length === 0;
  d.groups.forEach(function(g){
    var key = [g.scope, g.against, g.direction, g.rule_id].join("|"), sample = "no sample kept (over the sampling rate)";
    if (g.sample) {
      var s = g.sample;
      sample = details("d:" + key, s.method + " " + s.uri, el("div", {}, [
        el("div", {"class": "meta", text: "from " + s.client + (s.host ? ", Host " + s.host : "") + ", " + when(s.time)}),
        el("div", {"class": "trail", text: decision(s.orderly) + "\n  " + (s.orderly.trail || []).join("\n  ")}),
        s.other ? el("div", {"class": "trail", text: decision(s.other) + "\n  " + (s.other.trail || []).join("\n  ")}) : null,
        s.backend ? el("div", {"class": "trail", text: "backend: " + s.backend.status}) : null]));
    }
    var rule = el("td", {}, [g.rule_id === "-" ? "-" : el("a", {href: "#rule-" + g.rule_id, text: g.rule_id})]);
    body.appendChild(el("tr", {"data-key": key}, [td(g.scope), td(g.against), td(g.direction, g.direction === "would_newly_allow" ? "newly-allow" : "newly-deny"),
      rule, td(g.count, "num"), td(when(g.first)), td(when(g.last)), td(g.generation, "num"), el("td", {}, [sample])]));
  });
}

function ruleRow(r, sec){
  var cls = r.kind === "default" ? "default" : (r.kind === "setting" ? "setting" : "line");
  var ex = r.example ? el("a", {href: "/api/v1/explain?rule=" + encodeURIComponent(r.id), target: "_blank", title: r.example.method + " " + r.example.target + " from " + r.example.client, text: "explain"}) : "";
  var id = el("td", {}, [el("code", {text: r.id}), " ", sec ? el("a", {href: "#sec-" + sec, title: "its section", text: "§"}) : null]);
  var text = r.text + (r.parts && r.parts.length > 1 ? "  [" + r.parts.map(function(p){ return p.word + ": " + p.matches; }).join(" · ") + "]" : "");
  return el("tr", {id: "rule-" + r.id, "class": cls, "data-rule": r.id}, [id, td(r.where), el("td", {}, [el("code", {text: text})]),
    td(r.matches, "num"), td(r.decisive, "num"), td(r.necessary, "num"), td(when(r.last_hit)), el("td", {}, [verdict(r.verdict, r.why)]), el("td", {}, [ex])]);
}
function drawRules(d){
  var table = document.getElementById("rules");
  Array.prototype.slice.call(table.tBodies).forEach(function(b){ table.removeChild(b); });
  var group = function(id, title, meta, rules, sv, svWhy){
    var body = el("tbody", {id: "sec-" + id, "data-section": title});
    body.appendChild(el("tr", {"class": "section"}, [el("td", {colspan: 7}, [title + "  ", el("span", {"class": "meta", text: meta})]),
      el("td", {"class": "section-verdict"}, [verdict(sv, svWhy)]), el("td")]));
    var settings = rules.filter(function(r){ return r.kind === "setting"; });
    rules.filter(function(r){ return r.kind !== "setting"; }).forEach(function(r){ body.appendChild(ruleRow(r, id)); });
    if (settings.length) {
      var fold = el("tr", {"class": "fold"}, [el("td", {colspan: 9}, [details("s:" + id, settings.length + " setting" + (settings.length > 1 ? "s" : "") + " (no verdict of their own: they go with the section)", el("span"))])]);
      body.appendChild(fold);
      var d = fold.querySelector("details");
      settings.forEach(function(r){ var row = ruleRow(r, id); row.hidden = !d.open; row.setAttribute("data-folded", ""); body.appendChild(row); });
      d.addEventListener("toggle", function(){ body.querySelectorAll("tr[data-folded]").forEach(function(row){ row.hidden = !d.open; }); filter(); });
    }
    table.appendChild(body);
  };
  d.sections.forEach(function(s){
    group(s.id, s.section, s.policy + " · " + s.where + " · " + s.requests + " requests decided with it in force" + (s.methods ? " (" + s.methods + ")" : ""), s.rules, s.verdict, s.why);
  });
  if (d.other.length) group("other", "Outside any section", "server-level lines and built-in defaults", d.other);
  var v = d.verdicts, parts = [];
  ["needed", "can go", "dead", "demoted", "with section", "not seen", "section needed", "section can go"].forEach(function(k){ if (v[k]) parts.push(v[k] + " " + k); });
  document.getElementById("since").textContent = "verdicts " + d.since + ": " + (parts.join(", ") || "none yet");
  filter();
}

function filter(){
  var q = document.getElementById("filter").value.trim().toLowerCase(), shown = 0, total = 0;
  Array.prototype.forEach.call(document.getElementById("rules").tBodies, function(body){
    var title = body.getAttribute("data-section").toLowerCase(), any = false;
    Array.prototype.forEach.call(body.rows, function(row){
      if (row.className === "section" || row.className === "fold") return;
      total++;
      var folded = row.hasAttribute("data-folded") && !body.querySelector("details").open;
      var match = !q || title.indexOf(q) >= 0 || row.textContent.toLowerCase().indexOf(q) >= 0;
      row.hidden = folded || !match;
      if (match) { shown++; any = true; }
    });
    body.hidden = !any;
  });
  document.getElementById("shown").textContent = shown + " of " + total + " rules";
}

function summary(sc, dis, rules){
  var hour = 0;
  sc.scopes.forEach(function(s){ hour += s.hour_disagreements; });
  var s = document.getElementById("summary");
  s.textContent = "";
  s.appendChild(el("span", {"class": hour ? "bad" : "ok", id: "summary-disagreements",
    text: hour ? hour + " disagreements in the last hour" : "no disagreement in the last hour"}));
  s.appendChild(document.createTextNode(" (" + dis.total + " since orderly started) · "));
  s.appendChild(el("span", {id: "summary-rollout", text: sc.scopes.map(function(x){
    if (x.mode !== "enforce") return x.name + ": " + x.mode + ", nothing enforced (" + x.enforce + (x.shadow ? " compared with " + x.shadow : "") + ")";
    if (!x.shadow || x.percent >= 100) return x.name + ": " + x.enforce + " enforced for every client";
    return x.name + ": " + x.enforce + " enforced for " + pct(x.percent) + " of clients, " + x.shadow + " for the rest";
  }).join("; ")}));
  var v = rules.verdicts;
  s.appendChild(document.createTextNode(" · "));
  s.appendChild(el("span", {id: "summary-retire", text: (v["can go"] || 0) + " rules can go, " + (v.dead || 0) + " dead, " + (v.demoted || 0) + " demoted, " + (v.needed || 0) + " needed; " + (v["section can go"] || 0) + " sections can go as a whole"}));
}

function refresh(){
  Promise.all([get("/api/v1/scopes"), get("/api/v1/disagreements"), get("/api/v1/rules")]).then(function(a){
    status(a[0]); drawScopes(a[0]); drawDisagreements(a[1]); drawRules(a[2]); summary(a[0], a[1], a[2]);
    document.body.setAttribute("data-drawn", a[0].now);
  }).catch(function(e){
    var r = document.getElementById("reload"); r.className = "bad"; r.textContent = "cannot read the API: " + e.message;
  });
}
var input = document.getElementById("filter");
input.addEventListener("input", filter);
// The address can carry a filter: #q=legacy.conf
var h = new URLSearchParams(location.hash.slice(1));
if (h.get("q")) input.value = h.get("q");
refresh();
setInterval(refresh, REFRESH);
})();
</script>
</body></html>
`
