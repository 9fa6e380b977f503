package main

import (
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate/retire"
)

// adminPage is the page an operator keeps open during a cutover: the
// scopes with their modes and shares, every rule with its counters and a
// retirement verdict, and the latest disagreements. It loads nothing
// from elsewhere: its style and its sorting and filtering script are
// inline.
type adminPage struct {
	h  *proxy.Handler
	rl *reloader
}

type adminRule struct {
	ID, Policy, Where, Text, Verdict, Why string
	Enforced                              bool
	Matches, Decisive                     uint64
	First, Last                           string
	FirstUnix, LastUnix                   int64
	Parts                                 string
}

type adminData struct {
	Generation    uint64
	Loaded        string
	ReloadOK      bool
	ReloadErr     string
	Scopes        []proxy.Scope
	Rules         []adminRule
	Disagreements []proxy.Sample
	Now           string
}

func (a *adminPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, gen := a.h.Policies()
	d := adminData{Generation: gen, Scopes: p.InForce(), Disagreements: a.h.Disagreements(), Now: time.Now().UTC().Format(time.RFC3339)}
	a.rl.mu.Lock()
	d.Loaded, d.ReloadOK, d.ReloadErr = a.rl.loaded.UTC().Format(time.RFC3339), a.rl.lastErr == "", a.rl.lastErr
	a.rl.mu.Unlock()
	static := map[string]retire.Finding{}
	for _, f := range retire.Static(p.Legacy.Config()) {
		if _, ok := static[f.RuleID]; !ok {
			static[f.RuleID] = f
		}
	}
	policyOf := p.PolicyOf()
	seen := map[string]bool{}
	for _, r := range p.Rules() {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		d.Rules = append(d.Rules, ruleRow(r, policyOf(r), !p.Demoted[r.ID], static))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// Nothing from elsewhere, ever: the page's own inline style and script only.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'")
	w.Header().Set("Cache-Control", "no-store")
	if err := adminTemplate().Execute(w, d); err != nil {
		a.rl.logger.Error("admin page", "err", err)
	}
}

// ruleRow is one rule as the page shows it, with its retirement verdict.
func ruleRow(r *policy.Rule, pol string, enforced bool, static map[string]retire.Finding) adminRule {
	m, dec, last := r.Stats()
	first := r.FirstHit()
	row := adminRule{
		ID: r.ID, Policy: pol, Where: fmt.Sprintf("%s:%d", r.File, r.Line), Text: r.Text, Enforced: enforced,
		Matches: m, Decisive: dec, First: stamp(first), Last: stamp(last), FirstUnix: unixSeconds(first), LastUnix: unixSeconds(last),
	}
	if r.File == "" {
		row.Where = "(built in)"
	}
	var parts []string
	for _, p := range r.Parts {
		parts = append(parts, fmt.Sprintf("%s: %d", p.Word, p.Matches()))
	}
	row.Parts = strings.Join(parts, " · ")
	switch f, ok := static[r.ID]; {
	case ok:
		row.Verdict, row.Why = "delete: "+f.Kind, f.Why
	case !enforced:
		row.Verdict, row.Why = "demoted", "shadow-only: evaluated and counted, no longer enforced; delete it when its demoted disagreements stay at zero"
	case m == 0 && dec == 0:
		row.Verdict, row.Why = "not fired", "has neither matched nor decided a request in the counters' lifetime"
	case dec == 0:
		row.Verdict, row.Why = "never decisive", "matched, but another rule always decided"
	default:
		row.Verdict, row.Why = "in use", "decides requests"
	}
	return row
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

func unixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// adminTemplate is the admin page's template, parsed when first needed:
// not by every command at start-up.
var adminTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("admin").Funcs(template.FuncMap{
		"pct": func(f float64) string {
			return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".") + "%"
		},
		"join": func(s []string) string { return strings.Join(s, "\n") },
		"or":   func(s, d string) string { return cmpOr(s, d) },
		"sorted": func(rs []adminRule) []adminRule {
			// Retirement candidates first, then by file and line.
			out := slices.Clone(rs)
			rank := func(v string) int {
				switch {
				case strings.HasPrefix(v, "delete"):
					return 0
				case v == "demoted":
					return 1
				case v == "not fired":
					return 2
				case v == "never decisive":
					return 3
				}
				return 4
			}
			slices.SortStableFunc(out, func(a, b adminRule) int { return rank(a.Verdict) - rank(b.Verdict) })
			return out
		},
	}).Parse(adminHTML))
})

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

const adminHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>orderly: cutover</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 .2em}h2{font-size:16px;margin:1.6em 0 .4em}
.meta{color:#5b6475}.bad{color:#b3261e;font-weight:600}.ok{color:#1e7b34}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 0 0 1px #dde1e8}
th,td{padding:4px 8px;border-bottom:1px solid #e6e9ef;text-align:left;vertical-align:top}
th{background:#eef1f6;cursor:pointer;user-select:none;white-space:nowrap}
th[data-dir=asc]::after{content:" ▲"}th[data-dir=desc]::after{content:" ▼"}
td.num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:12px}
tr.demoted td{background:#fff8e1}tr.candidate td{background:#fdecea}
input{font:inherit;padding:4px 8px;width:28em;margin:0 0 .5em}
.trail{font-size:12px;color:#5b6475;white-space:pre-wrap}
</style></head>
<body>
<h1>orderly</h1>
<div class="meta">generation <b id="generation">{{.Generation}}</b> · loaded {{.Loaded}} ·
{{if .ReloadOK}}<span class="ok" id="reload">last reload succeeded</span>{{else}}<span class="bad" id="reload">last reload failed: {{.ReloadErr}}</span>{{end}} · page at {{.Now}}</div>

<h2>Scopes</h2>
<table id="scopes" class="sortable"><thead><tr><th>scope</th><th>host</th><th>path</th><th>mode</th><th>enforces</th><th>shadows</th><th data-num>enforce share</th></tr></thead><tbody>
{{range .Scopes}}<tr><td>{{.Name}}</td><td>{{or .Host "any"}}</td><td>{{or .Path "any"}}</td><td>{{.Mode}}</td><td>{{.Enforce}}</td><td>{{or .Shadow "none"}}</td><td class="num" data-v="{{.Percent}}">{{pct .Percent}}</td></tr>
{{end}}</tbody></table>

<h2>Rules</h2>
<input id="filter" type="search" placeholder="filter rules: ID, file, text, verdict" aria-label="filter rules">
<span class="meta" id="shown"></span>
<table id="rules" class="sortable"><thead><tr><th>rule</th><th>policy</th><th>where</th><th>directive</th><th data-num>hits</th><th data-num>decisive</th><th data-num>first hit</th><th data-num>last hit</th><th>verdict</th><th>words</th></tr></thead><tbody>
{{range sorted .Rules}}<tr class="{{if not .Enforced}}demoted{{else if eq .Verdict "not fired"}}candidate{{end}}" data-rule="{{.ID}}">
<td><code>{{.ID}}</code></td><td>{{.Policy}}</td><td>{{.Where}}</td><td><code>{{.Text}}</code></td>
<td class="num" data-v="{{.Matches}}">{{.Matches}}</td><td class="num" data-v="{{.Decisive}}">{{.Decisive}}</td>
<td data-v="{{.FirstUnix}}">{{.First}}</td><td data-v="{{.LastUnix}}">{{.Last}}</td>
<td title="{{.Why}}">{{.Verdict}}</td><td class="trail">{{.Parts}}</td></tr>
{{end}}</tbody></table>

<h2>Latest disagreements</h2>
{{if .Disagreements}}<table id="disagreements" class="sortable"><thead><tr><th>time</th><th>scope</th><th>against</th><th>direction</th><th>request</th><th>client</th><th>decision in force</th><th>compared with</th></tr></thead><tbody>
{{range .Disagreements}}<tr><td>{{.Time.Format "2006-01-02T15:04:05Z07:00"}}</td><td>{{.Scope}}</td><td>{{.Against}}</td><td>{{.Direction}}</td>
<td><code>{{.Method}} {{.URI}}</code><br><span class="meta">{{.Host}}</span></td><td>{{.Client}}</td>
<td>{{.Orderly.Policy}}: {{.Orderly.Decision}} {{if .Orderly.Status}}{{.Orderly.Status}}{{end}}<div class="trail">{{join .Orderly.Trail}}</div></td>
<td>{{if .Other}}{{.Other.Policy}}: {{.Other.Decision}} {{if .Other.Status}}{{.Other.Status}}{{end}}<div class="trail">{{join .Other.Trail}}</div>{{else if .Backend}}backend: {{.Backend.Status}}{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p class="meta" id="no-disagreements">No disagreement so far.</p>{{end}}

<script>
(function(){
  function key(td, num){ var v = td.getAttribute("data-v"); if (num) return parseFloat(v === null ? td.textContent : v) || 0; return (v === null ? td.textContent : v).trim().toLowerCase(); }
  function sortBy(table, col, dir){
    var th = table.tHead.rows[0].cells[col], num = th.hasAttribute("data-num");
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function(a, b){ var x = key(a.cells[col], num), y = key(b.cells[col], num); return (x < y ? -1 : x > y ? 1 : 0) * (dir === "desc" ? -1 : 1); });
    rows.forEach(function(r){ body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function(c){ c.removeAttribute("data-dir"); });
    th.setAttribute("data-dir", dir);
  }
  function filter(q){
    var table = document.getElementById("rules"), n = 0, rows = table.tBodies[0].rows;
    q = q.trim().toLowerCase();
    for (var i = 0; i < rows.length; i++) { var show = !q || rows[i].textContent.toLowerCase().indexOf(q) >= 0; rows[i].hidden = !show; if (show) n++; }
    document.getElementById("shown").textContent = n + " of " + rows.length + " rules";
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function(table){
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function(th, i){
      th.addEventListener("click", function(){ sortBy(table, i, th.getAttribute("data-dir") === "asc" ? "desc" : "asc"); });
    });
  });
  var input = document.getElementById("filter");
  input.addEventListener("input", function(){ filter(input.value); });
  // The address can carry a view: #q=Deny&sort=4&dir=desc (rules table).
  var h = new URLSearchParams(location.hash.slice(1));
  if (h.get("q")) { input.value = h.get("q"); }
  if (h.get("sort") !== null) { sortBy(document.getElementById("rules"), parseInt(h.get("sort"), 10), h.get("dir") || "asc"); }
  filter(input.value);
})();
</script>
</body></html>
`
