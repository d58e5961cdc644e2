#!/usr/bin/env python3
"""atlas/page.py: the DLPack atlas, one static HTML page (and its JSON) from a merged
sweep record (atlas/sweep.py run, or `dlpack-validate report merge` of the shards' sweeps).

  atlas/page.py SWEEP.json --html atlas.html [--json atlas.json] [--manifest sweep-manifest.json]
                      [--previous OLD_SWEEP_OR_ATLAS.json] [--baselines baselines/peers] [--repro DIR] [--title T]
  atlas/page.py --from-atlas site/atlas/atlas.json --html site/atlas/index.html [--json ...]
                      (the page of an earlier sweep rendered again by this code: its verdicts as they
                      were, its links and text made publishable)

The published page links only into its own folder: it writes confirm.html (the text of each
confirming script it links, with the helper modules they import) and requirements.html beside
it, and it shows no path of the machine that swept it (public_text).

Rows are requirements grouped by area; columns are libraries. A cell shows the library's
releases oldest to newest as small squares (holds, warn, broken, not tested), since which
release the rule holds without a break up to the newest, the release that broke it if one
did after an earlier release held it, and links to the confirming script of a baseline
entry (baselines/peers/<library>.json `confirmed_by`) and to reproducers (--repro DIR) for
the cases behind a break. A pair view follows: producer library × consumer library per dtype class.

A release's verdict on a requirement is the worst of its own results that cite it: fail,
crash, timeout or xfail make it broken (an error, the validator unable to judge, counts as not tested); else a warn makes it warn; else a pass makes it
hold; only skips leave it untested. Pair results count for the side they are charged to.
The page is plain HTML and CSS with a few lines of script for sorting and filtering; it works
(unsorted, unfiltered) with scripts blocked.
"""
import argparse
import html
import json
import os
import re
import sys

BAD = {"fail", "crash", "timeout", "xfail"}
# An `error` is the validator's own trouble (it could not judge), never the library's: the
# atlas counts it as not tested.
# The report areas in their order: the area table of the project's requirement table.
AREAS = re.findall(r"^\| `([a-z_]+)` \| .+? \| [A-Z, ]+ \|$",
                   open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec",
                                     "requirements.md"), encoding="utf-8").read(), re.M)
# Each case's title: the case catalogue (cases/catalogue.tsv, generated and checked; columns id,
# title, ...), read without a build.
CASE_TITLES = {f[0]: f[1] for f in (line.rstrip("\n").split("\t") for line in open(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cases", "catalogue.tsv"),
    encoding="utf-8") if not line.startswith("#")) if len(f) > 1}


def version_key(text):
    parts = re.findall(r"\d+|[a-z]+", text.split("+")[0].lower())
    return [(0, int(p)) if p.isdigit() else (-1, p) for p in parts]


def split_name(name):
    lib, _, rel = name.rpartition(" ")
    if lib and rel[:1].isdigit():
        return lib, rel
    return name, ""


def dtype_class(dtype):
    if dtype.startswith("bool"):
        return "bool"
    if dtype.startswith("complex"):
        return "complex"
    if dtype.startswith(("bfloat", "float8", "float6", "float4")):
        return "ML formats (bfloat16, float8 ...)"
    if dtype.startswith("float"):
        return "float"
    if dtype.startswith("uint"):
        return "unsigned int"
    if dtype.startswith("int"):
        return "int"
    return dtype or "other"


def first_change(per_release):
    """The first release whose verdict differs from the tested release before it (None if none)."""
    seen = [(rel, st) for rel, st in per_release.items() if st != "untested"]
    return next((rel for (_, a), (rel, b) in zip(seen, seen[1:]) if a != b), None)


def worst(statuses):
    if statuses & BAD:
        return "broken"
    if "warn" in statuses:
        return "warn"
    if statuses & {"pass", "xpass"}:
        return "holds"
    return "untested"


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ABS_PATH = re.compile(r"(?<![\w.~])/(?:[\w.+@-]+/)*[\w.+@-]+")


def public_text(text):
    """Text for the published page: no path of the machine that swept it. A path inside this
    checkout becomes repository-relative; any other absolute path keeps only its last two parts
    ('.../google+highway/repo')."""
    def one(m):
        p = m.group(0)
        if p == REPO_ROOT or p.startswith(REPO_ROOT + "/"):
            return os.path.relpath(p, REPO_ROOT)
        parts = [x for x in p.split("/") if x]
        return ".../" + "/".join(parts[-2:]) if len(parts) > 2 else p
    return _ABS_PATH.sub(one, str(text))


_PUBLISHED = {}  # link anchor -> the script's path from the repository root, for confirm.html


def publish_script(script, out_dir):
    """The link to a confirmation script (a path from the repository root, peers/confirm/NAME.py)
    that works wherever the page is published: its text is shown on confirm.html, written beside
    the page (write_confirm_page) with the helper modules it imports."""
    if not os.path.isfile(os.path.join(REPO_ROOT, script)):
        return os.path.relpath(os.path.join(REPO_ROOT, script), out_dir)  # the link says where it should be
    anchor = os.path.basename(script)
    _PUBLISHED[anchor] = script
    return "confirm.html#" + anchor


def write_confirm_page(out_dir, title):
    """confirm.html: the text of every confirming script the page links (and the helper modules
    of their folders), each under its file name, to save and run with the library installed."""
    e = html.escape
    shown = dict(_PUBLISHED)
    for script in list(_PUBLISHED.values()):
        folder = os.path.dirname(script)
        for f in sorted(os.listdir(os.path.join(REPO_ROOT, folder))):
            if f.startswith("_") and f.endswith(".py"):
                shown.setdefault(f, os.path.join(folder, f))
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(title)}: confirming scripts</title>"
           f"<meta name=viewport content='width=device-width'><style>{CSS}pre{{background:#f6f6f6;padding:.5rem;"
           "overflow-x:auto}</style></head><body>"
           f"<h1>{e(title)}: the confirming scripts</h1><p class=lead>Each finding on the atlas is shown by a script "
           "that imports only the library (and the helper modules below): save it under its name beside them and "
           "run it with the library installed. <a href='index.html'>Back to the atlas</a>.</p>"]
    for name in sorted(shown):
        text = open(os.path.join(REPO_ROOT, shown[name]), encoding="utf-8").read()
        out.append(f"<h2 id='{e(name)}'>{e(name)}</h2><pre>{e(text)}</pre>")
    out.append("</body></html>\n")
    with open(os.path.join(out_dir, "confirm.html"), "w", encoding="utf-8") as f:
        f.write("".join(out))


def read_findings(path, out_dir):
    """atlas/findings.tsv: LIBRARY, REQUIREMENT, SCRIPT (from the repository root), SUMMARY."""
    out = []
    if not path or not os.path.exists(path):
        return out
    root = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        lib, q, script, summary = line.rstrip("\n").split("\t")[:4]
        link = publish_script(script, out_dir) if root == REPO_ROOT else os.path.relpath(os.path.join(root, script),
                                                                                       out_dir)
        out.append({"library": lib, "requirement": q, "summary": summary, "script": link})
    return out


def carried_verdicts(carry, swept):
    """From an earlier page's JSON (--carry): the verdicts of the releases this sweep did not run
    ({(requirement, library, release): verdict}), their cells' case ids and links where the
    library was not swept at all, and the libraries' release lists."""
    verdicts, cells, rels = {}, {}, {}
    swept_libs = {split_name(n)[0] for n in swept}
    for lib, rs in (carry or {}).get("libraries", {}).items():
        for rel in rs:
            if f"{lib} {rel}" not in swept:
                rels.setdefault(lib, set()).add(rel)
    for row in (carry or {}).get("requirements", []):
        for lib, c in row["cells"].items():
            for rel, st in c["releases"].items():
                if f"{lib} {rel}" not in swept and st != "untested":
                    verdicts[(row["id"], lib, rel)] = st
            if lib not in swept_libs:
                cells[(row["id"], lib)] = c
    return verdicts, cells, rels


def requirement_verdicts(rec):
    """(requirement, subject index) -> the statuses it got, and -> the (case id, subject name as a
    file name) of each bad one. A pair result counts for the side it is charged to."""
    subjects = rec["subjects"]
    seen, bad_cases = {}, {}
    for r in rec["results"]:
        charged = r.get("charged_to")
        if r.get("peer") is not None:
            if not charged:
                continue
            idx = charged["subject"]
        else:
            idx = r["subject"]
        # What each requirement got: its own checks where the case made them (a case that
        # could not check a rule says nothing about it), the case's charged requirements for
        # a death or a result without checks.
        verdicts = [(c.get("requirement"), c.get("status")) for c in r.get("checks") or [] if c.get("requirement")]
        if r["status"] in ("crash", "timeout", "error") or not verdicts:
            verdicts += [(q, r["status"]) for q in r.get("requirements") or []]
        elif r["status"] == "xfail":
            verdicts = [(q, "xfail" if st in BAD | {"warn"} else st) for q, st in verdicts]
        for q, status in verdicts:
            if status == "error":
                status = "skip"
            seen.setdefault((q, idx), set()).add(status)
            if status in BAD or status == "warn":
                bad_cases.setdefault((q, idx), []).append((r["id"], re.sub(r"[^A-Za-z0-9_.+-]", "_",
                                                                           subjects[r["subject"]].get("name", ""))))
    return seen, bad_cases


def confirm_scripts(baselines_dir):
    """(baseline file stem, case) -> the command of its entry's confirmed_by."""
    confirm = {}
    if baselines_dir and os.path.isdir(baselines_dir):
        for f in sorted(os.listdir(baselines_dir)):
            if not f.endswith(".json"):
                continue
            try:
                doc = json.load(open(os.path.join(baselines_dir, f)))
            except (OSError, ValueError):
                continue
            for e in doc.get("entries", []):
                if e.get("confirmed_by"):
                    confirm.setdefault((f[:-5], e.get("case", "")), e["confirmed_by"])
    return confirm


def repro_scripts(repro_dir, out_dir):
    """(case, subject as a file name) -> the reproducer scripts written for it, relative to the page."""
    repro = {}
    if repro_dir and os.path.isdir(repro_dir):
        for dirpath, _, files in sorted(os.walk(repro_dir)):
            for f in sorted(files):
                if f.endswith(".py"):
                    parts = f[:-3].split("__")  # <case>__<subject>[__<peer>]
                    repro.setdefault((parts[0], parts[1] if len(parts) > 1 else ""), []).append(
                        os.path.relpath(os.path.join(dirpath, f), out_dir))
    return repro


class _Sources:
    """What a requirement's cells are made from: the sweep's verdicts, the earlier page's
    (--carry), the libraries' releases, the confirming scripts, reproducers and findings."""

    def __init__(self, who, libraries, seen, bad_cases, carried, carried_cells, confirm, repro, findings, out_dir):
        self.who, self.libraries, self.seen, self.bad_cases = who, libraries, seen, bad_cases
        self.carried, self.carried_cells, self.confirm, self.repro = carried, carried_cells, confirm, repro
        self.findings, self.out_dir = findings, out_dir

    def cell(self, q, lib, rels):
        """Requirement q's cell for library lib, or None where no release of it tested q."""
        per = {}
        cases = []
        for i, (l, rel) in enumerate(self.who):
            if l != lib or (q, i) not in self.seen:
                continue
            per[rel] = worst(self.seen[(q, i)])
            cases += self.bad_cases.get((q, i), [])
        for rel in rels:
            if rel not in per and (q, lib, rel) in self.carried:
                per[rel] = self.carried[(q, lib, rel)]
        tested = [rel for rel in rels if per.get(rel, "untested") != "untested"]
        if not tested:
            return None
        # Every claim rests on cells that ran: "now" is the newest release's own verdict
        # ("untested" where it did not run the rule), and "since" the oldest release of the
        # unbroken run of holds that ends at the newest (a release that did not run the rule
        # ends the run: nothing is known of it).
        now = per.get(rels[-1], "untested")
        since = None
        for rel in reversed(rels):
            if per.get(rel, "untested") != "holds":
                break
            since = rel
        changed = None
        for prev, rel in zip(tested, tested[1:]):
            if per[prev] == "holds" and per[rel] != "holds":
                changed = rel
        # A rule that broke after an earlier release held it is a finding only once a script
        # shows it (atlas/findings.tsv); until then the page says the verdict changed.
        confirmed = [f for f in self.findings if f["library"] == lib and f["requirement"] == q]
        broke = changed if changed and confirmed else None
        links = self.links(q, lib, cases)
        cases = [c for c, _ in cases]
        if (q, lib) in self.carried_cells:  # a library this sweep did not run: its earlier cell's cases and links
            earlier = self.carried_cells[(q, lib)]
            cases += earlier.get("cases", [])
            links += [l for l in earlier.get("links", []) if l not in links and l.get("case") in earlier.get("cases", [])]
        return {"releases": {rel: per.get(rel, "untested") for rel in rels}, "since": since,
                "broke_in": broke, "changed_in": changed, "now": now,
                "last_tested": tested[-1], "cases": sorted(set(cases))[:20], "links": links[:10]}

    def links(self, q, lib, cases):
        """The cell's links: its findings first, then each bad case's confirming script and reproducers."""
        links = []
        for c, who_safe in sorted(set(cases)):
            if (lib, c) in self.confirm and not any(l.get("case") == c and "script" in l for l in links):
                # confirmed_by names the script from the repository root (peers/confirm/...):
                # the page carries a copy of it (confirm/NAME.py), so the link works where it is published.
                links.append({"case": c, "script": publish_script(self.confirm[(lib, c)].split()[0], self.out_dir)})
            for path in self.repro.get((c, who_safe), []):
                links.append({"case": c, "repro": path})
        for f in self.findings:
            if f["library"] == lib and f["requirement"] == q:
                links.insert(0, {"case": f["summary"], "script": f["script"]})
        return links


def requirement_order(reqs):
    """Sort key of a requirement id: its area in the spec's order, then prefix and number."""
    def key(q):
        area = reqs.get(q, {}).get("area", "protocol")
        return (AREAS.index(area) if area in AREAS else 99, q.split("-")[0], int(re.sub(r"\D", "", q) or 0))
    return key


def headline_of(libraries, rows, findings):
    """Per library: what is broken, warned, holds and untested now, where it broke, its findings."""
    headline = []
    for lib, rels in libraries.items():
        cells = [r["cells"][lib] for r in rows if lib in r["cells"]]
        headline.append({"library": lib, "releases": rels,
                         "broken_now": sorted(r["id"] for r in rows if r["cells"].get(lib, {}).get("now") == "broken"),
                         "warn_now": sorted(r["id"] for r in rows if r["cells"].get(lib, {}).get("now") == "warn"),
                         "broke_in": sorted((c["broke_in"], r["id"]) for r in rows for c in [r["cells"].get(lib)]
                                            if c and c["broke_in"]),
                         "holds_now": sum(c["now"] == "holds" for c in cells),
                         "untested_now": sorted(r["id"] for r in rows if r["cells"].get(lib, {}).get("now") == "untested"),
                         # every history finding of atlas/findings.tsv for this library, with the
                         # release its cells change in where they show the change
                         "findings": [dict(f, changed_in=next((r["cells"][lib].get("changed_in") or
                                                                first_change(r["cells"][lib]["releases"])
                                                                for r in rows if r["id"] == f["requirement"]
                                                                and lib in r["cells"]), None))
                                      for f in findings if f["library"] == lib]})
    return headline


def pair_counts(rec, carry, swept):
    """dtype class -> producer -> consumer -> status counts of the pair results, with the earlier
    page's pairs of releases not swept now."""
    subjects = rec["subjects"]
    pairs = {}
    for r in rec["results"]:
        if r.get("peer") is None:
            continue
        cls = dtype_class((r.get("params") or {}).get("dtype", ""))
        p, c = subjects[r["subject"]]["name"], subjects[r["peer"]]["name"]
        cell = pairs.setdefault(cls, {}).setdefault(p, {}).setdefault(c, {})
        cell[r["status"]] = cell.get(r["status"], 0) + 1
    for cls, producers in (carry or {}).get("pairs", {}).items():  # pairs with a release not swept now
        for p, row in producers.items():
            for c, cell in row.items():
                if p not in swept or c not in swept:
                    pairs.setdefault(cls, {}).setdefault(p, {}).setdefault(c, dict(cell))
    return pairs


def sweep_facts(manifest, carry, carried_rels, swept):
    """(sweep info, releases swept with their validator build, releases not installable)."""
    sweep, missing = {}, []
    for m in (manifest or {}).get("lines", []):
        if m.get("not_installable"):
            missing.append({"library": m["subject"], "release": m["release"], "why": public_text(m["not_installable"])})
        elif "record" in m:
            sweep[f"{m['subject']} {m['release']}"] = {k: m[k] for k in ("validator_commit", "stale_cases", "from_store")
                                                        if k in m}
    info = {k: (manifest or {}).get(k) for k in ("wall_s", "disk_gib")}
    carried_names = {f"{lib} {rel}" for lib, rs in carried_rels.items() for rel in rs}
    for name, m in (carry or {}).get("releases_swept", {}).items():
        if name in carried_names:
            sweep.setdefault(name, dict(m, carried=True))
    missing += [dict(m, why=public_text(m.get("why", ""))) for m in (carry or {}).get("not_installed", [])
                if f"{m['library']} {m['release']}" not in swept and m not in missing]
    if carried_names:
        info["carried_releases"] = len(carried_names)
    return info, sweep, missing


def build(rec, baselines_dir, repro_dir, out_dir, findings=(), manifest=None, carry=None):
    subjects = rec["subjects"]
    who = [split_name(s.get("name") or s.get("path", "?")) for s in subjects]
    # The releases this sweep ran (their own results; a partner seen only in pairs is not one):
    # --carry keeps every other release's verdicts from the earlier page.
    swept = {subjects[r["subject"]].get("name", "") for r in rec["results"] if r.get("peer") is None}
    carried, carried_cells, carried_rels = carried_verdicts(carry, swept)
    libraries = {}
    for lib, rel in who:
        libraries.setdefault(lib, set()).add(rel)
    for lib, rels in carried_rels.items():
        libraries.setdefault(lib, set()).update(rels)
    libraries = {lib: sorted(rels, key=version_key) for lib, rels in sorted(libraries.items())}
    seen, bad_cases = requirement_verdicts(rec)
    sources = _Sources(who, libraries, seen, bad_cases, carried, carried_cells, confirm_scripts(baselines_dir),
                       repro_scripts(repro_dir, out_dir), findings, out_dir)
    reqs = dict({row["id"]: row for row in (carry or {}).get("requirements", [])}, **rec.get("requirements", {}))
    rows = []
    for q in sorted({q for q, _ in seen} | {q for q, _, _ in carried}, key=requirement_order(reqs)):
        row = {"id": q, "area": reqs.get(q, {}).get("area", "protocol"), "level": reqs.get(q, {}).get("level", ""),
               "summary": reqs.get(q, {}).get("summary", ""), "cells": {}}
        for lib, rels in libraries.items():
            cell = sources.cell(q, lib, rels)
            if cell is not None:
                row["cells"][lib] = cell
        rows.append(row)
    untested = [r["id"] for r in rows if not r["cells"]]
    rows = [r for r in rows if r["cells"]]
    # libraries seen only as pair partners (charged nothing, swept in no release of their own)
    libraries = {lib: rels for lib, rels in libraries.items() if any(lib in r["cells"] for r in rows)}
    info, sweep, missing = sweep_facts(manifest, carry, carried_rels, swept)
    return {"schema": "dlpack-validate/atlas", "schema_version": 1,
            "libraries": libraries, "headline": headline_of(libraries, rows, findings), "requirements": rows,
            "untested": untested, "pairs": pair_counts(rec, carry, swept),
            "results": len(rec["results"]), "subjects": [s.get("name") for s in subjects],
            "findings": list(findings), "not_installed": missing, "sweep": info, "releases_swept": sweep}


def changes(prev, atlas):
    """What the atlas says that the previous one did not: per (library, release, requirement),
    newly broken (held or warned before), newly fixed (broken before), newly tested (untested or
    absent before; counted per release), releases added and removed."""
    old = {(lib, rel, row["id"]): st for row in prev["requirements"] for lib, c in row["cells"].items()
           for rel, st in c["releases"].items()}
    broken, fixed, tested = [], [], {}
    for row in atlas["requirements"]:
        for lib, c in row["cells"].items():
            for rel, st in c["releases"].items():
                was = old.get((lib, rel, row["id"]), "untested")
                if st == "broken" and was in ("holds", "warn"):
                    broken.append({"library": lib, "release": rel, "requirement": row["id"], "was": was})
                elif was == "broken" and st in ("holds", "warn"):
                    fixed.append({"library": lib, "release": rel, "requirement": row["id"], "now": st})
                elif was == "untested" and st != "untested":
                    tested[f"{lib} {rel}"] = tested.get(f"{lib} {rel}", 0) + 1
    rels = lambda a: {f"{lib} {r}" for lib, rs in a["libraries"].items() for r in rs}  # noqa: E731
    return {"newly_broken": broken, "newly_fixed": fixed, "newly_tested": tested,
            "releases_added": sorted(rels(atlas) - rels(prev)), "releases_removed": sorted(rels(prev) - rels(atlas))}


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1rem 1.5rem;color:#1a1a1a;background:#fff}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.5rem 0 .4rem}h3{font-size:1rem;margin:1rem 0 .3rem}
p.lead{margin:.2rem 0 .8rem;color:#333;max-width:70rem}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f0f0f0;position:sticky;top:0;cursor:pointer;text-align:left}
tr.area td{background:#e8eef7;font-weight:600}
td.req{white-space:nowrap}td.sum{max-width:26rem;color:#333}
.sq,.sh,.sw,.sb,.su{display:inline-block;width:9px;height:9px;margin-right:1px;border:1px solid #777}
.holds,.sh{background:#2e8b57}.warn,.sw{background:#e0a800}.broken,.sb{background:#c62828}.untested,.su{background:#fff}
.now-broken{color:#b00020;font-weight:600}.now-warn{color:#8a6100}.since{color:#1e6b3c}
.brk{color:#b00020}.unc{color:#666}.legend span{margin-right:1rem}
#filter{padding:4px 8px;width:24rem;margin:.4rem 0}
table.head{margin:.3rem 0 .8rem}table.head th{position:static;cursor:default}
td.pc{text-align:center;min-width:5rem}.p0{background:#e6f4ea}.p1{background:#fdecea}
.scroll{overflow-x:auto;max-width:100%}p.lead{overflow-wrap:anywhere}td.full{max-width:60rem}
"""

JS = """
(function(){
var f=document.getElementById('filter'),l=document.getElementById('lib');
if(l){l.addEventListener('change',function(){var hs=[].slice.call(document.querySelectorAll('#atlas thead th'));
var k=-1;hs.forEach(function(th,i){if(i>2&&th.firstChild.textContent===l.value)k=i;});
document.querySelectorAll('#atlas thead tr, #atlas tbody tr.req').forEach(function(tr){
[].forEach.call(tr.cells,function(td,i){if(i>2)td.style.display=(k<0||i===k)?'':'none';});});});}
if(f){f.addEventListener('input',function(){var q=f.value.toLowerCase();
document.querySelectorAll('#atlas tbody tr.req').forEach(function(tr){
tr.style.display=tr.textContent.toLowerCase().indexOf(q)<0?'none':'';});});}
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var tb=th.closest('table').tBodies[0],rows=[].slice.call(tb.querySelectorAll('tr.req'));
var dir=th.dataset.dir==='1'?-1:1;th.dataset.dir=dir===1?'1':'0';
rows.sort(function(a,b){var x=a.cells[i].dataset.k||a.cells[i].textContent,y=b.cells[i].dataset.k||b.cells[i].textContent;
return x<y?-dir:x>y?dir:0;});
tb.querySelectorAll('tr.area').forEach(function(r){r.remove();});rows.forEach(function(r){tb.appendChild(r);});});});
})();
"""


def head_html(atlas, title):
    """The title, the lead and the per-library summary table."""
    e = html.escape
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(title)}</title>"
           f"<meta name=viewport content='width=device-width'><style>{CSS}</style></head><body>"]
    libs = atlas["libraries"]
    n_rel = sum(len(v) for v in libs.values())
    out.append(f"<h1>{e(title)}</h1><p class=lead>{len(libs)} libraries, {n_rel} releases, "
               f"{len(atlas['requirements'])} requirements tested, {atlas['results']} results"
               + (f" (of the releases this sweep ran; the verdicts of {atlas['sweep']['carried_releases']} more are "
                  "carried from the earlier page, as the builds line below says)" if atlas.get("sweep", {}).get(
                      "carried_releases") else "") + ". Below the summary, "
               "one row per requirement: in each library's cell its releases oldest to newest, since which release "
               "the rule holds up to the newest, and the release that broke it.</p>")
    out.append("<table class=head><thead><tr><th>library</th><th>releases swept</th><th>rules held by the newest</th>"
               "<th>broken in the newest (MUST)</th><th>warn in the newest (SHOULD)</th><th>not run by the newest</th>"
               "<th>history findings (confirmed by a script)</th>"
               "</tr></thead><tbody>")
    for h in atlas["headline"]:
        found = "; ".join(
            f"<a href='{e(f['script'])}' title='{e(f['summary'])}'>{e(f['requirement'])}</a>"
            + (f" (changed in {e(f['changed_in'])})" if f.get("changed_in") else "")
            for f in h.get("findings", []))
        out.append(f"<tr><td><b>{e(h['library'])}</b></td><td>{len(h['releases'])}: {e(h['releases'][0])} – "
                   f"{e(h['releases'][-1])}</td><td>{h['holds_now']}</td>"
                   f"<td class={'now-broken' if h['broken_now'] else ''}>{len(h['broken_now'])}"
                   f"{': ' + e(', '.join(h['broken_now'][:8])) if h['broken_now'] else ''}</td>"
                   f"<td>{len(h['warn_now'])}</td><td>{len(h.get('untested_now', []))}</td><td>{found or '–'}</td></tr>")
    out.append("</tbody></table>")
    return out


def changes_html(atlas):
    """What changed since the previous sweep (--previous), when the page knows."""
    e = html.escape
    out = []
    ch = atlas.get("changes")
    if ch:
        def items(xs, when):  # when: "was" (its verdict before) or "now" (its verdict now)
            word = "before" if when == "was" else "now"
            return ", ".join(f"{x['library']} {x['release']} {x['requirement']} ({x[when]} {word})" for x in xs[:40]) + \
                (f" and {len(xs) - 40} more" if len(xs) > 40 else "")
        by_release = sorted(ch["newly_tested"].items(), key=lambda kv: (split_name(kv[0])[0], version_key(split_name(kv[0])[1])))
        tested = ", ".join(f"{r} ({n})" for r, n in by_release[:60]) + (" ..." if len(by_release) > 60 else "")
        out.append(f"<h2 id=changes>What changed since the last sweep</h2><ul class=lead>"
                   f"<li><b>Newly broken</b> ({len(ch['newly_broken'])}): {e(items(ch['newly_broken'], 'was')) or 'none'}</li>"
                   f"<li><b>Newly fixed</b> ({len(ch['newly_fixed'])}): {e(items(ch['newly_fixed'], 'now')) or 'none'}</li>"
                   f"<li><b>Newly tested</b> (requirements per release, {sum(ch['newly_tested'].values())} in all): "
                   f"{e(tested) or 'none'}</li>"
                   f"<li>Releases added ({len(ch['releases_added'])}): {e(', '.join(ch['releases_added'])) or 'none'}; "
                   f"removed: {e(', '.join(ch['releases_removed'])) or 'none'}</li></ul>")
    return out


def notes_html(atlas):
    """The lead paragraphs: releases not installable, the validator builds, findings, untested rules."""
    e = html.escape
    out = []
    if atlas.get("not_installed"):
        out.append("<p class=lead><b>Listed but not in the atlas</b> (cannot be installed or loaded here): " +
                   "; ".join(f"{e(m['library'])} {e(m['release'])}: {e(public_text(m['why'])[:160])}"
                             for m in atlas["not_installed"])
                   + "</p>")
    builds = {}
    for name, info in (atlas.get("releases_swept") or {}).items():
        full = info.get("validator_commit") or "?"
        c = full[:10] + (" (with uncommitted changes)" if full.endswith("-dirty") else "") + \
            (", carried from the earlier page" if info.get("carried") else "")
        b = builds.setdefault(c, [0, 0])
        b[0] += 1
        b[1] += info.get("stale_cases", 0)
    if builds:
        out.append("<p class=lead>Swept with validator build(s): " + "; ".join(
            f"{e(c)} ({n} releases{f', {st} of their case results older than the newest build' if st else ''})"
            for c, (n, st) in sorted(builds.items(), key=lambda kv: -kv[1][0])) + "</p>")
    if atlas.get("findings"):
        out.append("<p class=lead><b>Confirmed history findings</b> (each shown by a script that imports only the "
                   "library): " + "; ".join(f"<a href='{e(f['script'])}'>{e(f['library'])} {e(f['requirement'])}</a>: "
                                            f"{e(f['summary'])}" for f in atlas["findings"]) + "</p>")
    if atlas["untested"]:
        out.append(f"<p class=lead>Not tested on any release swept ({len(atlas['untested'])}): "
                   f"{e(', '.join(atlas['untested']))}.</p>")
    return out


def cell_html(c):
    """One library's cell of a requirement row: a square per release, what holds or broke since
    when, and up to three links (confirming scripts, reproducers)."""
    e = html.escape
    if not c:
        return "<td data-k=9></td>"
    rank = {"broken": 0, "warn": 1, "holds": 2}.get(c["now"], 3)
    # one square per release, oldest first; its tooltip names the release (the colour says
    # the verdict): short markup, as the page holds rows x releases of them
    squares = "".join(f"<i class=s{st[0]} title={e(rel)}></i>" for rel, st in c["releases"].items())
    parts = [squares]
    if c["now"] == "holds" and c["since"]:
        parts.append(f"<span class=since>since {e(c['since'])}</span>")
    elif c["now"] == "untested":
        parts.append(f"<span class=unc>not run by {e(list(c['releases'])[-1])}; last tested in "
                     f"{e(c.get('last_tested') or '?')}</span>")
    elif c["now"] != "holds":
        parts.append(f"<span class=now-{e(c['now'])}>{e(c['now'])} in {e(list(c['releases'])[-1])}</span>")
    if c["broke_in"]:
        parts.append(f"<span class=brk>broke in {e(c['broke_in'])}</span>")
    elif c.get("changed_in"):
        parts.append(f"<span class=unc title='a release held it, a later one does not; no script "
                     f"confirms it yet'>changed in {e(c['changed_in'])} (unconfirmed)</span>")
    for link in c["links"][:3]:
        named = link["case"] + (f": {CASE_TITLES[link['case']]}" if link["case"] in CASE_TITLES else "")
        if "script" in link:
            parts.append(f"<a href='{e(link['script'])}' title='{e(named)}'>confirm</a>")
        else:
            parts.append(f"<a href='{e(link['repro'])}' title='{e(named)}'>repro</a>")
    tip = "; ".join(c["cases"][:6])
    return f"<td data-k={rank} title='{e(tip)}'>{'<br>'.join(parts)}</td>"


def requirements_html(atlas, req_doc):
    """The legend, the filters and the requirement table: one row per rule, one cell per library."""
    e = html.escape
    libs = atlas["libraries"]
    out = []
    out.append("<p class=legend><span><i class='sq holds'></i> holds</span><span><i class='sq warn'></i> warn (a "
               "SHOULD not honoured)</span><span><i class='sq broken'></i> broken (a MUST, or a crash)</span>"
               "<span><i class='sq untested'></i> not tested (skipped: the library lacks the feature)</span></p>")
    out.append("<input id=filter type=search placeholder='filter rows: id, area, text, release' aria-label=filter> "
               "<select id=lib aria-label='one library'><option value=''>every library</option>" +
               "".join(f"<option>{e(lib)}</option>" for lib in libs) + "</select>")
    out.append("<div class=scroll><table id=atlas class=sortable><thead><tr><th>requirement</th><th>level</th>"
               "<th>text</th>")
    for lib, rels in libs.items():
        out.append(f"<th title='{e(', '.join(rels))}'>{e(lib)}<br><small>{e(rels[0])}–{e(rels[-1])}</small></th>")
    out.append("</tr></thead><tbody>")
    area = None
    for row in atlas["requirements"]:
        if row["area"] != area:
            area = row["area"]
            out.append(f"<tr class=area><td colspan={3 + len(libs)}>{e(area.replace('_', ' '))}</td></tr>")
        out.append(f"<tr class=req id='r-{e(row['id'])}'><td class=req><a href='{e(req_doc)}#{e(row['id'].lower())}'>{e(row['id'])}"
                   f"</a></td><td>{e(row['level'])}</td><td class=sum>{e(row['summary'].replace('`', '')[:150])}</td>")
        for lib in libs:
            out.append(cell_html(row["cells"].get(lib)))
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return out


def requirements_page(atlas, title):
    """requirements.html, published beside the page: each requirement's id (the anchor the
    page's links name), level, area and full text, so the links work wherever the page is."""
    e = html.escape
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(title)}: requirements</title>"
           f"<meta name=viewport content='width=device-width'><style>{CSS}</style></head><body>"
           f"<h1>{e(title)}: the requirements</h1><p class=lead>The rules the atlas grades, as dlpack-validate's "
           "requirement table (spec/requirements.md) states them. <a href='index.html'>Back to the atlas</a>.</p>"
           "<div class=scroll><table><thead><tr><th>id</th><th>level</th><th>area</th><th>text</th></tr></thead><tbody>"]
    for row in atlas["requirements"]:
        out.append(f"<tr id='{e(row['id'].lower())}'><td class=req>{e(row['id'])}</td><td>{e(row['level'])}</td>"
                   f"<td>{e(row['area'].replace('_', ' '))}</td><td class=full>{e(row['summary'].replace('`', ''))}</td></tr>")
    out.append("</tbody></table></div></body></html>\n")
    return "".join(out)


def pairs_html(atlas):
    """The pair view: per dtype class, producer library x consumer library."""
    e = html.escape
    out = []
    # The pair view, one table per dtype class: producer library x consumer library, each cell
    # summed over the releases swept (the release pairs with a bad result in its tooltip; every
    # release pair is in the JSON's "pairs").
    if atlas["pairs"]:
        out.append("<h2 id=pairs>Pairs</h2><p class=lead>Producer library (rows) to consumer library (columns), "
                   "per dtype class: results that pass out of those run (skips left out), summed over the releases "
                   "of each side; a cell with a bad result (fail, crash, timeout) names the release pairs in its "
                   "tooltip.</p>")
    for cls, producers in sorted(atlas["pairs"].items()):
        table = {}
        for p, row in producers.items():
            for c, cell in row.items():
                agg = table.setdefault(split_name(p)[0], {}).setdefault(split_name(c)[0], {"n": {}, "bad": []})
                for st, n in cell.items():
                    agg["n"][st] = agg["n"].get(st, 0) + n
                if any(st in BAD for st in cell):
                    agg["bad"].append(f"{p} -> {c}")
        consumers = sorted({c for row in table.values() for c in row})
        out.append(f"<h3>{e(cls)}</h3><div class=scroll><table><thead><tr><th>producer \\ consumer</th>")
        out += [f"<th>{e(c)}</th>" for c in consumers]
        out.append("</tr></thead><tbody>")
        for p in sorted(table):
            out.append(f"<tr><td>{e(p)}</td>")
            for c in consumers:
                agg = table[p].get(c)
                if not agg:
                    out.append("<td></td>")
                    continue
                cell = agg["n"]
                bad = sum(n for st, n in cell.items() if st in BAD)
                tested = sum(n for st, n in cell.items() if st != "skip")
                ok = sum(n for st, n in cell.items() if st in ("pass", "xpass"))
                txt = f"{ok}/{tested}" if tested else "skip"
                tip = "; ".join(agg["bad"][:12]) + (f"; and {len(agg['bad']) - 12} more" if len(agg["bad"]) > 12 else "")
                title = f" title='{e(tip)}'" if tip else ""
                out.append(f"<td class='pc p{1 if bad else 0}'{title}>{txt}{f' <b>{bad} bad</b>' if bad else ''}</td>")
            out.append("</tr>")
        out.append("</tbody></table></div>")
    return out


def render(atlas, title, req_doc="requirements.html"):
    out = head_html(atlas, title) + changes_html(atlas) + notes_html(atlas) + requirements_html(atlas, req_doc) \
        + pairs_html(atlas)
    out.append(f"<script>{JS}</script></body></html>")
    return "".join(out)


def read_json(path, schema, why):
    """The JSON document at path if its schema is `schema`; else None, with `why` on stderr."""
    try:
        doc = json.load(open(path))
        if doc.get("schema") == schema:
            return doc
    except (OSError, ValueError, AttributeError):
        pass
    sys.stderr.write(f"atlas/page.py: error: {why}\n")
    return None


def main():
    ap = argparse.ArgumentParser(prog="atlas/page.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", nargs="?")
    ap.add_argument("--from-atlas", help="render an earlier page's atlas JSON again (no sweep record needed)")
    ap.add_argument("--html", required=True)
    ap.add_argument("--json")
    ap.add_argument("--baselines", default=os.path.join(REPO_ROOT, "baselines", "peers"))
    ap.add_argument("--repro", help="the reproducers' folder (atlas/sweep.py run --repro: OUT/repro)")
    ap.add_argument("--findings", default=os.path.join(REPO_ROOT, "atlas", "findings.tsv"),
                    help="confirmed history findings, each with its script (default atlas/findings.tsv)")
    ap.add_argument("--manifest", action="append", help="the sweep's sweep-manifest.json: releases not installable (listed with "
                                       "the reason), the validator build and stale cases per release (repeatable: the shards' manifests)")
    ap.add_argument("--previous", help="the previous sweep's merged record, or its atlas JSON: the page says what "
                                       "changed since (newly broken, newly fixed, newly tested)")
    ap.add_argument("--carry", help="an earlier page's atlas JSON (site/atlas/atlas.json): the releases this sweep "
                                    "did not run keep their verdicts from it (a sweep of some libraries renders the whole "
                                    "page; the page names the build that made each release's verdicts)")
    ap.add_argument("--title", default="The DLPack atlas")
    ap.add_argument("--requirements-doc", help="where requirement ids link (default: requirements.html, "
                                                 "written beside the page)")
    a = ap.parse_args()
    out_dir = os.path.dirname(os.path.abspath(a.html))
    if a.from_atlas:
        return rerender(a, out_dir)
    if not a.sweep:
        sys.stderr.write("atlas/page.py: error: a sweep record (or --from-atlas) is needed\n")
        return 2
    rec = read_json(a.sweep, "dlpack-validate/run", f"{a.sweep} is not a dlpack-validate run record")
    if rec is None:
        return 2
    manifest = None
    for path in a.manifest or []:  # shards' manifests: their lines together
        try:
            part = json.load(open(path))
        except (OSError, ValueError) as ex:
            sys.stderr.write(f"atlas/page.py: error: --manifest {path}: {ex}\n")
            return 2
        if manifest is None:
            manifest = part
        else:
            manifest = dict(manifest, lines=manifest["lines"] + part.get("lines", []),
                            wall_s=max(manifest.get("wall_s") or 0, part.get("wall_s") or 0))
    findings = read_findings(a.findings, out_dir)
    carry = a.carry and read_json(a.carry, "dlpack-validate/atlas", f"--carry {a.carry} is not an atlas JSON")
    if a.carry and carry is None:
        return 2
    atlas = build(rec, a.baselines, a.repro, out_dir, findings, manifest, carry)
    if a.previous:
        try:
            prev = json.load(open(a.previous))
        except (OSError, ValueError) as ex:
            sys.stderr.write(f"atlas/page.py: error: --previous {a.previous}: {ex}\n")
            return 2
        if prev.get("schema") == "dlpack-validate/run":
            prev = build(prev, None, None, out_dir, findings)
        if prev.get("schema") != "dlpack-validate/atlas":
            sys.stderr.write(f"atlas/page.py: error: --previous {a.previous} is neither a run record nor an atlas JSON\n")
            return 2
        atlas["changes"] = changes(prev, atlas)
    page = write_outputs(a, out_dir, atlas)
    print(f"atlas/page.py: {a.html}: {len(page.encode()) / 1024:.0f} KiB, {len(atlas['libraries'])} libraries, "
          f"{sum(len(r) for r in atlas['libraries'].values())} releases, {len(atlas['requirements'])} requirements")
    ch = atlas.get("changes")
    if ch:
        print(f"atlas/page.py: since {a.previous}: {len(ch['newly_broken'])} newly broken, {len(ch['newly_fixed'])} "
              f"newly fixed, {sum(ch['newly_tested'].values())} newly tested (requirement, release), "
              f"{len(ch['releases_added'])} releases added, {len(ch['releases_removed'])} removed")
    return 0


def write_outputs(a, out_dir, atlas):
    """The page, its JSON (--json) and what it links beside it: requirements.html (unless
    --requirements-doc names another place) and confirm.html. Returns the page's text."""
    if not a.requirements_doc:
        with open(os.path.join(out_dir, "requirements.html"), "w", encoding="utf-8") as f:
            f.write(requirements_page(atlas, a.title))
    page = render(atlas, a.title, a.requirements_doc or "requirements.html")
    with open(a.html, "w", encoding="utf-8") as f:
        f.write(page)
    if _PUBLISHED:
        write_confirm_page(out_dir, a.title)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(atlas, f, indent=1)
    return page


def republish_links(node, src_dir, out_dir):
    """An earlier page's links to this repository's scripts (relative to where that page lay),
    pointed at copies beside the page (publish_script)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "script" and isinstance(v, str) and v.startswith("confirm.html#"):
                publish_script(os.path.join("peers", "confirm", v.split("#", 1)[1]), out_dir)
            elif k == "script" and isinstance(v, str):
                target = os.path.normpath(os.path.join(src_dir, v))
                if target.startswith(REPO_ROOT + os.sep):
                    node[k] = publish_script(os.path.relpath(target, REPO_ROOT), out_dir)
            else:
                republish_links(v, src_dir, out_dir)
    elif isinstance(node, list):
        for v in node:
            republish_links(v, src_dir, out_dir)


def rerender(a, out_dir):
    atlas = read_json(a.from_atlas, "dlpack-validate/atlas", f"--from-atlas {a.from_atlas} is not an atlas JSON")
    if atlas is None:
        return 2
    republish_links(atlas, os.path.dirname(os.path.abspath(a.from_atlas)), out_dir)
    atlas["not_installed"] = [dict(m, why=public_text(m.get("why", ""))) for m in atlas.get("not_installed", [])]
    page = write_outputs(a, out_dir, atlas)
    print(f"atlas/page.py: {a.html}: {len(page.encode()) / 1024:.0f} KiB, rendered again from {a.from_atlas}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
