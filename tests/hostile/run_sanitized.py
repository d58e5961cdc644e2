#!/usr/bin/env python3
"""tests/hostile/run_sanitized.py: configure and build a second tree with
-DDLPV_SANITIZE=address,undefined, then run the reference suite (every case must pass) and a
few hostile libraries (their expected statuses) under the sanitizers.

ASan errors in the supervisor fail its exit code; in a worker they are a crash of the case
(the supervisor runs sanitized workers with abort_on_error=1). UBSan only prints, so every
run is also repeated in-process (--isolate none) with stderr scanned: a UBSan report located
in the validator's own code (harness/, cases/, validator/, reports/) or any ASan report fails
this script; reports in test fixtures (which plant undefined behaviour on purpose) are
counted and ignored. Used by the CTest test hostile.sanitize
(-DDLPV_SANITIZE_TEST=ON); also runnable by hand:
  python3 tests/hostile/run_sanitized.py --source . --build /tmp/build-asan
"""
import argparse
import os
import re
import subprocess
import sys
import time

# name -> (case filter, expectations for check_run.py)
HOSTILE = {
    "segv_in_export": ("producer.tensor.float32.contiguous.*", "*=crash:export:SIGSEGV"),
    "garbage_strides_2p62": ("producer.tensor.float32.contiguous.*", "*=fail::LAYOUT-07"),
    "garbage_shape_dangling": ("producer.shape.ones.*", "*=fail::LAYOUT-05"),
    "garbage_data_dangling": ("producer.tensor.float32.contiguous.*", "*=fail::LAYOUT-07"),
    "flood_output": ("producer.tensor.float32.contiguous.*", "*=pass"),
}


def step(what, cmd, env=None, quiet=False):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env)
    print(f"[{time.time() - t0:6.1f} s] {what}: exit {p.returncode}")
    if p.returncode != 0 and not quiet:
        print(p.stdout[-4000:])
        print(p.stderr[-4000:])
    return p.returncode == 0, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--jobs", default="2")
    a = ap.parse_args()
    ok, _ = step("configure", ["cmake", "-S", a.source, "-B", a.build, f"-DPython3_EXECUTABLE={a.python}",
                               "-DDLPV_SANITIZE=address,undefined", "-DDLPV_SANITIZE_TEST=OFF"])
    if not ok:
        return 1
    targets = ["dlpack-validate", "dlpv_reference"] + [f"dlpv_hostile_{n}" for n in HOSTILE]
    ok, _ = step("build", ["cmake", "--build", a.build, "-j", a.jobs, "--target"] + targets)
    if not ok:
        return 1
    check = os.path.join(a.source, "tests", "e2e", "check_run.py")
    exe = os.path.join(a.build, "dlpack-validate")
    out = os.path.join(a.build, "sanitize-runs")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    stderr_texts = []
    failures = 0
    ok, p = step("reference suite, every case passes",
                 [a.python, check, "--validator", exe, "--subject", os.path.join(a.build, "tests", "libdlpv_reference.so"),
                  "--out", os.path.join(out, "reference.json"), "--expect-all", "pass", "--skip-ok-if", "CUDA",
                  "--skip-ok-if", "export of bcomplex32", "--skip-ok-if", "contiguous bcomplex32 tensor cleanly"], env)
    failures += not ok
    _, p = step("reference suite in-process (sanitizer reports)",
                [exe, "--isolate", "none", "--json", os.path.join(out, "reference-inprocess.json"),
                 os.path.join(a.build, "tests", "libdlpv_reference.so")], env, quiet=True)
    stderr_texts.append(("reference", p.stderr))
    for name, (pattern, expect) in HOSTILE.items():
        lib = os.path.join(a.build, "tests", "hostile", f"libdlpv_hostile_{name}.so")
        ok, p = step(f"hostile {name}", [a.python, check, "--validator", exe, "--subject", lib,
                                          "--out", os.path.join(out, f"{name}.json"), "--expect", expect,
                                          "--timeout", "5", f"--extra=--filter={pattern}"], env)
        failures += not ok
        if not expect.startswith("*=crash"):  # a crash in-process would end the run
            _, p = step(f"hostile {name} in-process", [exe, "--isolate", "none", "--filter", pattern, "--json",
                                                       os.path.join(out, f"{name}-inprocess.json"), "--", lib], env, quiet=True)
            stderr_texts.append((name, p.stderr))
    ours = re.compile(r"/(harness|cases|validator|reports)/[^:]*:\d+:\d+: runtime error")
    ub_ours, ub_fixtures, asan = [], 0, []
    for run, text in stderr_texts:
        for line in text.splitlines():
            if "ERROR: AddressSanitizer" in line or "ERROR: LeakSanitizer" in line:
                asan.append(f"{run}: {line.strip()}")
            if "runtime error" not in line:
                continue
            if ours.search(line):
                ub_ours.append(line.strip())
            else:
                ub_fixtures += 1
    print(f"UBSan: {len(ub_ours)} report(s) in the validator's code, {ub_fixtures} in fixtures (planted)")
    for line in sorted(set(ub_ours)):
        print("  ", line)
    failures += len(ub_ours) > 0
    print(f"ASan/LSan: {len(asan)} report(s)")
    for line in asan:
        print("  ", line)
    failures += len(asan) > 0
    print(f"{failures} sanitized run(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
