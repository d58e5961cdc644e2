// SPDX-License-Identifier: Apache-2.0
// html_assets.cpp: the inline stylesheet and script of the HTML report.
//
// The report must stay readable where archived HTML is served with a strict CSP (Jenkins
// blocks scripts and inline styles), so the CSS only decorates semantic tables and the
// script only adds controls: with both blocked, nothing is lost but colour and filtering.
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
.st-crash a, .st-timeout a, .st-error a { color: #fff; text-decoration: underline; }
table.charged { margin: .4em 0; background: #fff; }
table.charged td.n { text-align: right; }
td.st-pass, td.st-fail, td.st-warn, td.st-skip, td.st-xfail, td.st-xpass { color: #1b1b1b; }
.matrix td { text-align: center; min-width: 4.5em; }
.matrix small, .tally { color: #444; font-size: 85%; }
td.st-crash small, td.st-timeout small, td.st-error small { color: #eee; }
#results-filter { margin: .5em 0; display: flex; gap: .8em; align-items: center; }
.verdict nav p { margin: .4em 0 .1em; }
.verdict ul.groups { display: block; list-style: disc; padding-left: 1.4em; margin: 0; }
#unexpected > h2 { margin-top: 1em; }
section.att { border-left: 6px solid #b00020; padding: 0 0 0 .8em; margin: .8em 0 1.2em; }
section.att h3 { margin: .3em 0; }
div.cause h4 { margin: .5em 0 .2em; font-size: 1em; }
dl.eo { display: grid; grid-template-columns: max-content 1fr; gap: .1em .8em; margin: .2em 0; }
dl.eo dt { font-weight: 600; } dl.eo dd { margin: 0; overflow-wrap: anywhere; }
ul.affected { margin: .2em 0; padding-left: 1.2em; }
ul.affected summary { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
ul.affected details[open] { border: 1px solid #ccc; padding: 0 .6em .4em; margin: .2em 0; }
summary { cursor: pointer; }
small.obs { color: #555; }
ul.ids { margin: .2em 0 .6em; padding-left: 1.4em; font-size: 92%; }
#results details { margin: .15em 0; }
#results h3 { margin: 1em 0 .3em; }
.matrix-req td.n { text-align: right; min-width: 2.5em; }
.matrix-req details p { margin: .2em 0; font-size: 92%; }
.matrix-req summary { color: #444; font-size: 92%; }
p.allskip { margin: .3em 0 1em; }
)CSS";
}

const char* html_script() {
  // Plain ES5, no external references; adds a text filter and a status filter to the folded
  // lists of #results (matching lists open, empty ones hide). It never creates content from
  // the record.
  return R"JS(
(function () {
  var root = document.getElementById('results');
  if (!root) return;
  var buckets = Array.prototype.slice.call(root.querySelectorAll('details[data-status]'));
  var bar = document.createElement('div');
  bar.id = 'results-filter';
  var text = document.createElement('input');
  text.type = 'search';
  text.placeholder = 'filter: case id, subject, reason';
  text.size = 50;
  var status = document.createElement('select');
  var seen = {}, total = 0;
  status.appendChild(new Option('all statuses', ''));
  buckets.forEach(function (b) {
    var s = b.getAttribute('data-status');
    if (s && !seen[s]) { seen[s] = true; status.appendChild(new Option(s, s)); }
    total += b.querySelectorAll('li').length;
  });
  var count = document.createElement('span');
  function apply() {
    var needle = text.value.toLowerCase(), want = status.value, shown = 0;
    buckets.forEach(function (b) {
      var head = b.querySelector('summary').textContent.toLowerCase();
      var okStatus = !want || b.getAttribute('data-status') === want, any = false;
      Array.prototype.forEach.call(b.querySelectorAll('li'), function (li) {
        var ok = okStatus && (!needle || head.indexOf(needle) >= 0 ||
                              li.textContent.toLowerCase().indexOf(needle) >= 0);
        li.style.display = ok ? '' : 'none';
        if (ok) { shown++; any = true; }
      });
      b.style.display = any ? '' : 'none';
      if (needle) b.open = any;
    });
    count.textContent = shown + ' of ' + total + ' lines shown';
  }
  text.addEventListener('input', apply);
  status.addEventListener('change', apply);
  bar.appendChild(text); bar.appendChild(status); bar.appendChild(count);
  var h2 = root.querySelector('h2');
  root.insertBefore(bar, h2 ? h2.nextSibling : root.firstChild);
  apply();
})();
)JS";
}

}  // namespace dlpv::reports::detail
