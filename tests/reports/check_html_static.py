#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Offline structural check of the HTML writer (stdlib html.parser, no browser).

usage: check_html_static.py RENDER_EXE DATA_DIR

For every data/NAME.json: the section ids appear once and in the documented order, the
page references nothing outside itself, the embedded run record parses back to the record,
only the two expected <script> elements exist (library text never becomes markup), and
every status in a results row is also written as text.
"""
import html.parser
import json
import pathlib
import subprocess
import sys

ORDER = ["verdict", "subjects", "requirement-matrix", "support-matrix", "pair-matrix",
         "unexpected", "results", "run-record"]


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
        self.rows = []  # (data-status, text) of results rows
        self.row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        for key in ("src", "href", "action", "formaction", "poster", "data"):
            v = a.get(key)
            if v is not None and not v.startswith("#"):
                self.external.append((tag, key, v))
        if tag == "link" or (tag == "meta" and a.get("http-equiv", "").lower() == "refresh"):
            self.external.append((tag, "", str(a)))
        if tag == "script":
            self.scripts.append(a)
            self.in_json = a.get("type") == "application/json"
        if tag == "tr" and "data-status" in a:
            self.row = [a["data-status"], ""]

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_json = False
        if tag == "tr" and self.row is not None:
            self.rows.append(tuple(self.row))
            self.row = None

    def handle_data(self, data):
        if self.in_json:
            self.json_text.append(data)
        if self.row is not None:
            self.row[1] += data


def check(exe, record):
    baseline = record.with_name(record.stem + ".baseline.json")
    extra = [str(baseline)] if baseline.exists() else []
    page = subprocess.run([exe, str(record), "html"] + extra, check=True,
                          capture_output=True).stdout.decode("utf-8")
    run = json.loads(subprocess.run([exe, str(record), "json"] + extra, check=True,
                                    capture_output=True).stdout)
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
    if json.loads("".join(scan.json_text)) != run:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
