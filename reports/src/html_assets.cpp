// SPDX-License-Identifier: Apache-2.0
// html_assets.cpp: the inline stylesheet and script of the HTML report.
//
// The report must stay readable where archived HTML is served with a strict CSP (Jenkins
// blocks scripts and inline styles), so the CSS only decorates semantic tables and the
// script only adds controls: with both blocked, nothing is lost but colour and sorting.
// Status colours are always paired with the status word (never colour alone).
#include "html_parts.hpp"

namespace dlpv::reports::detail {

const char* html_style() {
  return R"CSS(
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1400px; padding: 0 1.5em 3em; color: #1b1b1b; }
h1, h2, h3 { line-height: 1.2; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #c8c8c8; padding: .25em .5em; text-align: left; vertical-align: top; }
td code { overflow-wrap: anywhere; }
thead th { background: #f0f0f0; }
code, pre { font-family: ui-monospace, monospace; font-size: 92%; }
pre.output { background: #f7f7f7; border: 1px solid #ddd; padding: .5em; max-height: 24em; overflow: auto; white-space: pre-wrap; word-break: break-all; }
.verdict { margin: 1em 0; padding: .8em 1.2em; border-radius: 6px; border: 3px solid; }
.verdict-pass { background: #e6f4ea; border-color: #1e7e34; }
.verdict-fail { background: #fdecea; border-color: #b00020; }
.verdict h1 { margin: 0 0 .3em; font-size: 2em; }
.verdict ul { list-style: none; padding: 0; margin: .3em 0; display: flex; flex-wrap: wrap; gap: .4em; }
.notice { font-weight: bold; color: #8a4b00; }
.st { display: inline-block; padding: 0 .4em; border-radius: 3px; font-weight: 600; }
.st-pass { background: #d4edda; } .st-fail { background: #f8c9c9; }
.st-warn { background: #ffe8a1; } .st-skip { background: #e2e3e5; }
.st-xfail { background: #d6e4f5; } .st-xpass { background: #ffd8b0; }
.st-crash { background: #b00020; color: #fff; } .st-timeout { background: #6f2da8; color: #fff; }
.st-error { background: #5a5a5a; color: #fff; }
td.st-pass, td.st-fail, td.st-warn, td.st-skip, td.st-xfail, td.st-xpass { color: #1b1b1b; }
.matrix td { text-align: center; min-width: 4.5em; }
.matrix small, .tally { color: #444; font-size: 85%; }
td.st-crash small, td.st-timeout small, td.st-error small { color: #eee; }
article.result { border: 1px solid #ccc; border-left: 6px solid #b00020; padding: .3em 1em; margin: 1em 0; }
article.result h3 { margin: .4em 0; }
ul.cases { margin: 0; padding-left: 1.2em; }
#results-filter { margin: .5em 0; display: flex; gap: .8em; align-items: center; }
th.sortable { cursor: pointer; }
)CSS";
}

const char* html_script() {
  // Plain ES5, no external references; adds a text filter, a status filter and
  // click-to-sort headers to #results-table. It never creates content from the record.
  return R"JS(
(function () {
  var table = document.getElementById('results-table');
  if (!table || !table.tBodies.length) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var bar = document.createElement('div');
  bar.id = 'results-filter';
  var text = document.createElement('input');
  text.type = 'search';
  text.placeholder = 'filter: case id, subject, requirement, reason';
  text.size = 50;
  var status = document.createElement('select');
  var seen = {};
  status.appendChild(new Option('all statuses', ''));
  rows.forEach(function (r) {
    var s = r.getAttribute('data-status');
    if (s && !seen[s]) { seen[s] = true; status.appendChild(new Option(s, s)); }
  });
  var count = document.createElement('span');
  function apply() {
    var needle = text.value.toLowerCase(), want = status.value, shown = 0;
    rows.forEach(function (r) {
      var ok = (!want || r.getAttribute('data-status') === want) &&
               (!needle || r.textContent.toLowerCase().indexOf(needle) >= 0);
      r.style.display = ok ? '' : 'none';
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' shown';
  }
  text.addEventListener('input', apply);
  status.addEventListener('change', apply);
  bar.appendChild(text); bar.appendChild(status); bar.appendChild(count);
  table.parentNode.insertBefore(bar, table);
  var heads = table.tHead ? table.tHead.rows[0].cells : [];
  Array.prototype.forEach.call(heads, function (th, col) {
    th.className += ' sortable';
    th.title = 'click to sort';
    var asc = true;
    th.addEventListener('click', function () {
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-key') || a.cells[col].textContent;
        var y = b.cells[col].getAttribute('data-key') || b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      asc = !asc;
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
)JS";
}

}  // namespace dlpv::reports::detail
