#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Offline structural check of the HTML writer (stdlib html.parser, no browser).

usage: check_html_static.py RENDER_EXE DATA_DIR

For every data/NAME.json: the section ids appear once and in the documented order (the
verdict, then "Needs attention"), the page references nothing outside itself, the embedded
run record parses back to the record, only the two expected <script> elements exist
(library text never becomes markup), and every status of a results row or folded list is
also written as text. Then a generated record of 1,300 results (the data records' results
repeated under new ids, as a two-library run with pairs and CUDA skips would have) must
render in well under a megabyte, with its embedded record abridged.
"""
import copy
import html.parser
import json
import pathlib
import subprocess
import sys
import tempfile

ORDER = ["verdict", "unexpected", "subjects", "requirement-matrix", "support-matrix",
         "pair-matrix", "results", "run-record"]
SIZE_LIMIT = 1_000_000  # bytes, for BIG_RESULTS results
BIG_RESULTS = 1300


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


class Scan(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = []
        self.scripts = []
        self.external = []
        self.in_json = False
        self.json_text = []
        self.rows = []  # (data-status, text) of results rows and folded lists
        self.row = None
        self.summary = None  # [data-status, text] of the <summary> of a <details data-status>
        self.pending = None  # data-status of the <details> whose <summary> comes next

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        for key in ("src", "href", "action", "formaction", "poster", "data"):
            v = a.get(key)
            # A link the reader may follow (a requirement's entry in docs/requirements.md) loads
            # nothing by itself; everything else must stay inside the file.
            if tag == "a" and key == "href" and v is not None and not v.lower().startswith("javascript:"):
                continue
            if v is not None and not v.startswith("#"):
                self.external.append((tag, key, v))
        if tag == "link" or (tag == "meta" and a.get("http-equiv", "").lower() == "refresh"):
            self.external.append((tag, "", str(a)))
        if tag == "script":
            self.scripts.append(a)
            self.in_json = a.get("type") == "application/json"
        if tag == "tr" and "data-status" in a:
            self.row = [a["data-status"], ""]
        if tag == "details" and "data-status" in a:
            self.pending = a["data-status"]
        if tag == "summary" and self.pending is not None:
            self.summary, self.pending = [self.pending, ""], None

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_json = False
        if tag == "tr" and self.row is not None:
            self.rows.append(tuple(self.row))
            self.row = None
        if tag == "summary" and self.summary is not None:
            self.rows.append(tuple(self.summary))
            self.summary = None

    def handle_data(self, data):
        if self.in_json:
            self.json_text.append(data)
        if self.row is not None:
            self.row[1] += data
        if self.summary is not None:
            self.summary[1] += data


def big_record(data, n=BIG_RESULTS):
    """A record of n results: those of the data records, repeated under new ids."""
    run = json.loads((data / "pairs.json").read_text())
    pool = []
    for p in sorted(data.glob("*.json")):
        if not p.name.endswith(".baseline.json"):
            pool += [r for r in json.loads(p.read_text()).get("results", [])
                     if isinstance(r.get("subject"), int) and r["subject"] < len(run["subjects"])]
    results = []
    while len(results) < n:
        r = copy.deepcopy(pool[len(results) % len(pool)])
        r["id"] = f'{r.get("id", "case")}.copy{len(results) // len(pool)}'
        results.append(r)
    run["results"] = results
    run["summary"] = None
    return run


def render(exe, record, extra=()):
    page = subprocess.run([exe, str(record), "html"] + list(extra), check=True,
                          capture_output=True).stdout.decode("utf-8")
    run = json.loads(subprocess.run([exe, str(record), "json"] + list(extra), check=True,
                                    capture_output=True).stdout)
    return page, run


def check(exe, record, page=None, run=None):
    baseline = record.with_name(record.stem + ".baseline.json")
    extra = [str(baseline)] if baseline.exists() else []
    if page is None:
        page, run = render(exe, record, extra)
    scan = Scan()
    scan.feed(page)
    scan.close()

    has_pairs = any(r.get("role") == "pair" for r in run["results"])
    want = [i for i in ORDER if has_pairs or i != "pair-matrix"]
    got = [i for i in scan.ids if i in ORDER]
    if got != want:
        fail(f"{record.name}: section ids {got}, want {want}")
    if len(set(scan.ids)) != len(scan.ids):
        dups = sorted({i for i in scan.ids if scan.ids.count(i) > 1})
        fail(f"{record.name}: duplicate ids {dups}")
    if scan.external:
        fail(f"{record.name}: external references {scan.external[:3]}")
    if len(scan.scripts) != 2:
        fail(f"{record.name}: {len(scan.scripts)} <script> elements (library text became markup?)")
    embedded = json.loads("".join(scan.json_text))
    if "abridged" in embedded:  # a large record: everything but the results and requirement texts
        head = {k: v for k, v in run.items() if k not in ("results", "requirements")}
        if {k: v for k, v in embedded.items() if k != "abridged"} != head:
            fail(f"{record.name}: abridged embedded record differs from the record's head")
    elif embedded != run:
        fail(f"{record.name}: embedded run record differs from the record")
    for status, text in scan.rows:
        if status not in text:
            fail(f"{record.name}: row with status {status} does not say so in text")
    legacy = [s for s in run["subjects"] if s.get("legacy_only")]
    if legacy and "legacy-only DLPack" not in page:
        fail(f"{record.name}: legacy-only subject not called out")
    print(f"ok: {record.name}: {len(scan.ids)} ids, {len(scan.rows)} result rows")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, data = sys.argv[1], pathlib.Path(sys.argv[2])
    records = sorted(p for p in data.glob("*.json") if not p.name.endswith(".baseline.json"))
    if not records:
        fail(f"no records in {data}")
    for record in records:
        check(exe, record)
    with tempfile.TemporaryDirectory(prefix="dlpv_html_") as tmp:
        big = pathlib.Path(tmp) / "big.json"
        big.write_text(json.dumps(big_record(data)))
        page, run = render(exe, big)
        check(exe, big, page, run)
        size = len(page.encode("utf-8"))
        if size >= SIZE_LIMIT:
            fail(f"{big.name}: {len(run['results'])} results render to {size} bytes (limit {SIZE_LIMIT})")
        if '"abridged"' not in page:
            fail(f"{big.name}: the whole record was embedded")
        print(f"ok: {len(run['results'])} results: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
