#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders the HTML reports in headless Chromium (stdlib only).

usage: check_html_browser.py RENDER_EXE DATA_DIR

For every data/NAME.json, and a generated record of 1,300 results: take a screenshot of the
first screen (1280x800) and check it is a real, non-blank image; measure the layout in that
viewport over the DevTools protocol, with scripts on and off, and check the first screen
shows the verdict and the "Needs attention" heading, and, when anything is unexpected, the
first group of unexpected results; dump the DOM with JavaScript enabled and check the
enhancement script ran (the filter bar exists) and no script injected by library text ran;
dump it again with scripts disabled and check the verdict banner and the matrices are still
there (server-side rendering).
Exits 77 (CTest SKIP_RETURN_CODE) when no Chromium is installed. Set DLPV_CHROMIUM to use
another binary.

Recent Chromium builds implement --dump-dom by evaluating script in the page, so with
scriptEnabled=false it prints nothing. In that case the DOM is read through the DevTools
protocol over --remote-debugging-pipe (DOM.getOuterHTML needs no page script), still with
scripts disabled.
"""
import json
import os
import pathlib
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_html_static  # noqa: E402  (the generated 1,300-result record)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
SKIP = 77
VIEW = (1280, 800)  # the "first screen" the layout assertions are about


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def find_chromium():
    env = os.environ.get("DLPV_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(binary, args, tmp):
    with tempfile.TemporaryDirectory(dir=tmp) as profile:
        cmd = [binary] + FLAGS + ["--user-data-dir=" + profile] + args
        proc = subprocess.run(cmd, capture_output=True, timeout=120)
    if proc.returncode != 0:
        fail(f"chromium exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return proc.stdout.decode("utf-8", errors="replace")


def devtools(binary, url, tmp, extra_flags, work):
    """Loads url in a page driven over the DevTools protocol on fds 3 (in) and 4 (out), then
    returns work(call, session) (call(method, params, session) sends one command)."""
    cmd_r, cmd_w = os.pipe()
    out_r, out_w = os.pipe()

    def wire_fds():  # in the child: the pipe ends become fds 3 and 4, inheritable
        a, b = os.dup(cmd_r), os.dup(out_w)
        os.dup2(a, 3)
        os.dup2(b, 4)

    with tempfile.TemporaryDirectory(dir=tmp) as profile:
        proc = subprocess.Popen(
            [binary] + FLAGS + extra_flags +
            ["--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            preexec_fn=wire_fds, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(out_w)
        pending, events, next_id = b"", [], [0]

        def receive(deadline):
            nonlocal pending
            while b"\0" not in pending:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([out_r], [], [], left)[0]:
                    fail("DevTools pipe: no answer from chromium")
                chunk = os.read(out_r, 1 << 16)
                if not chunk:
                    fail("DevTools pipe closed by chromium")
                pending += chunk
            message, pending = pending.split(b"\0", 1)
            return json.loads(message)

        def call(method, params=None, session=None):
            next_id[0] += 1
            message = {"id": next_id[0], "method": method, "params": params or {}}
            if session:
                message["sessionId"] = session
            os.write(cmd_w, json.dumps(message).encode() + b"\0")
            deadline = time.monotonic() + 60
            while True:
                m = receive(deadline)
                if m.get("id") == next_id[0]:
                    if "error" in m:
                        fail(f"DevTools {method}: {m['error']}")
                    return m["result"]
                events.append(m)

        try:
            page = next(t for t in call("Target.getTargets")["targetInfos"] if t["type"] == "page")
            session = call("Target.attachToTarget",
                           {"targetId": page["targetId"], "flatten": True})["sessionId"]
            call("Emulation.setDeviceMetricsOverride",
                 {"width": VIEW[0], "height": VIEW[1], "deviceScaleFactor": 1, "mobile": False},
                 session=session)
            call("Page.enable", session=session)
            call("Page.navigate", {"url": url}, session=session)
            deadline = time.monotonic() + 60
            while not any(e.get("method") == "Page.loadEventFired" for e in events):
                events.append(receive(deadline))
            result = work(call, session)
            os.write(cmd_w, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        finally:
            os.close(cmd_w)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(out_r)
    return result


def dump_dom_devtools(binary, url, tmp, extra_flags):
    """outerHTML of the loaded page (DOM.getOuterHTML needs no page script)."""
    def work(call, session):
        root = call("DOM.getDocument", {"depth": -1}, session=session)["root"]
        return call("DOM.getOuterHTML", {"nodeId": root["nodeId"]}, session=session)["outerHTML"]
    return devtools(binary, url, tmp, extra_flags, work)


# Layout facts of the page in a 1280x800 viewport, measured by the DevTools client
# (Runtime.evaluate runs in the client's context; the page's own scripts may be off).
MEASURE = r"""(function () {
  function top(e) { return e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : null; }
  function bottom(e) { return e ? Math.round(e.getBoundingClientRect().bottom + window.scrollY) : null; }
  var bad = ['fail', 'crash', 'timeout', 'error', 'warn', 'xpass'], first = null;
  var all = document.querySelectorAll('[data-status]');
  for (var i = 0; i < all.length && first === null; i++) {
    if (bad.indexOf(all[i].getAttribute('data-status')) >= 0 && all[i].getClientRects().length)
      first = top(all[i]);
  }
  var att = document.getElementById('unexpected');
  var heading = att ? att.querySelector('h2') : null;
  var group = att ? att.querySelector('[data-status]') : null;
  return JSON.stringify({
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
    viewport: [window.innerWidth, window.innerHeight],
    verdict_top: top(document.querySelector('#verdict h1')),
    verdict_bottom: bottom(document.getElementById('verdict')),
    attention_top: top(heading),
    first_group_top: top(group),
    first_unexpected_top: first
  });
})()"""


def measure(binary, url, tmp, extra_flags=()):
    def work(call, session):
        r = call("Runtime.evaluate", {"expression": MEASURE, "returnByValue": True}, session=session)
        return json.loads(r["result"]["value"])
    return devtools(binary, url, tmp, list(extra_flags), work)


def dump_dom(binary, url, tmp, extra_flags):
    dom = chromium(binary, extra_flags + ["--dump-dom", url], tmp)
    if not dom.strip():
        dom = dump_dom_devtools(binary, url, tmp, extra_flags)
    return dom


def png_pixels_vary(path):
    """True when the PNG decodes to more than a handful of distinct byte values."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path.name} is not a PNG")
    pos, idat, size = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    return size, len(set(raw[:: max(1, len(raw) // 200000)]))


def check_first_screen(binary, name, url, tmp, unexpected):
    """The verdict and "Needs attention" (its first group when there is one) in 1280x800."""
    for label, flags in (("with scripts", []), ("without scripts", ["--blink-settings=scriptEnabled=false"])):
        m = measure(binary, url, tmp, flags)
        if m["viewport"] != list(VIEW):
            fail(f"{name} ({label}): viewport {m['viewport']}, want {list(VIEW)}")
        if m["width"] > VIEW[0]:
            fail(f"{name} ({label}): page is {m['width']} px wide, wider than the window")
        if m["verdict_top"] is None or not 0 <= m["verdict_top"] < 200:
            fail(f"{name} ({label}): verdict heading at {m['verdict_top']} px, want the top")
        if m["attention_top"] is None or m["attention_top"] + 40 > VIEW[1]:
            fail(f"{name} ({label}): 'Needs attention' at {m['attention_top']} px, not on the first screen")
        if unexpected and (m["first_group_top"] is None or m["first_group_top"] + 40 > VIEW[1]):
            fail(f"{name} ({label}): first unexpected group at {m['first_group_top']} px, "
                 "not on the first screen")
    return m


def check(binary, exe, record, tmp):
    baseline = record.with_name(record.stem + ".baseline.json")
    extra = [str(baseline)] if baseline.exists() else []
    page = tmp / (record.stem + ".html")
    page.write_bytes(subprocess.run([exe, str(record), "html"] + extra, check=True,
                                    capture_output=True).stdout)
    url = page.resolve().as_uri()
    has_pairs = b'"role": "pair"' in record.read_bytes() or b'"role":"pair"' in record.read_bytes()
    ids = ["verdict", "unexpected", "requirement-matrix", "support-matrix"] + \
        (["pair-matrix"] if has_pairs else [])
    run = json.loads(subprocess.run([exe, str(record), "json"] + extra, check=True,
                                    capture_output=True).stdout)
    bad = {"fail", "crash", "timeout", "error"} | \
        ({"warn", "xpass"} if run.get("options", {}).get("strict") else set())
    unexpected = any(r.get("status") in bad for r in run.get("results", []))

    shot = tmp / (record.stem + ".png")
    chromium(binary, ["--screenshot=" + str(shot), "--hide-scrollbars",
                      f"--window-size={VIEW[0]},{VIEW[1]}", url], tmp)
    if not shot.exists() or shot.stat().st_size < 10000:
        fail(f"{record.name}: screenshot missing or tiny")
    size, distinct = png_pixels_vary(shot)
    if size != VIEW:
        fail(f"{record.name}: screenshot is {size}, want {VIEW[0]}x{VIEW[1]}")
    if distinct < 16:
        fail(f"{record.name}: screenshot looks blank ({distinct} distinct byte values)")
    m = check_first_screen(binary, record.name, url, tmp, unexpected)

    with_js = dump_dom(binary, url, tmp, [])
    without_js = dump_dom(binary, url, tmp, ["--blink-settings=scriptEnabled=false"])
    for name, dom in (("with scripts", with_js), ("without scripts", without_js)):
        for i in ids:
            if f'id="{i}"' not in dom:
                fail(f"{record.name} ({name}): element #{i} missing")
        if "PASS</h1>" not in dom and "FAIL</h1>" not in dom:
            fail(f"{record.name} ({name}): verdict banner text missing")
        if run.get("results") and "<table" not in dom.split('id="requirement-matrix"', 1)[1]:
            fail(f"{record.name} ({name}): requirement matrix has no table")
        if dom.count("<script") != 2:
            fail(f"{record.name} ({name}): {dom.count('<script')} script elements")
        if "<img" in dom:
            fail(f"{record.name} ({name}): library text became an <img> element")
    if 'id="results-filter"' not in with_js:
        fail(f"{record.name}: the enhancement script did not run with scripts enabled")
    if 'id="results-filter"' in without_js:
        fail(f"{record.name}: scripts ran although they were disabled")
    print(f"ok: {record.name}: {page.stat().st_size} bytes, {m['height']} px tall; first screen: "
          f"verdict at {m['verdict_top']} px, Needs attention at {m['attention_top']} px, first group "
          f"at {m['first_group_top']} px; DOM with/without scripts")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary = find_chromium()
    if binary is None:
        print("SKIP: no chromium found (install chromium or set DLPV_CHROMIUM)")
        return SKIP
    exe, data = sys.argv[1], pathlib.Path(sys.argv[2])
    records = sorted(p for p in data.glob("*.json") if not p.name.endswith(".baseline.json"))
    if not records:
        fail(f"no records in {data}")
    with tempfile.TemporaryDirectory(prefix="dlpv_html_") as tmp:
        for record in records:
            check(binary, exe, record, pathlib.Path(tmp))
        big = pathlib.Path(tmp) / "big1300.json"
        big.write_text(json.dumps(check_html_static.big_record(data)))
        check(binary, exe, big, pathlib.Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
