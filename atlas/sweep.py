#!/usr/bin/env python3
"""atlas/sweep.py: the release sweep. Runs `python -m validator` on every (library, release) of a
declared list (atlas/releases.tsv), each release in a cached venv of its own, and merges the
records into one (`dlpack-validate report merge`).

  atlas/sweep.py plan [--releases F] [--only LIB,...] [--shard K/N]
      the (library, release) lines this shard would sweep, one per line
  atlas/sweep.py run --out DIR [--releases F] [--only LIB,...] [--shard K/N]
                     [--partners LIB,... --partner-python PY]
                     [--budget-gib G] [--parallel N] [--validator-path DIR] [--cli PATH] [-- VALIDATOR ARGS...]
      sweep: DIR/<library>-<release>.json per line, DIR/sweep.json (the lines' records merged)
      and DIR/sweep-manifest.json (per line: installed or why not, seconds, venv size); with
      --repro, python -m validator --repro's scripts in DIR/repro/<library>-<release>/

Each release's venv is $DLPV_CACHE/atlas/<library>-<release>-<hash of its requirements and the
interpreter>, made from $DLPV_PYTHON (default /usr/bin/python3, the interpreter the validator's
module is built for) with binary wheels only (`--only-binary :all:`), pip's cache in
$DLPV_CACHE/pip. A lock serialises the making of venvs, and a venv counts as made only once its
stamp is written, so two sweeps on one cache never use a half-made venv. Venvs are made one at a
time; releases run side by side (--parallel N, default the cores: while one release runs the
next one's venv is made), each run with its share of the cores (-j) unless the arguments after
-- choose one. Before each venv is made, the least recently used venvs of other releases not in
use are deleted until the atlas folder fits in the disk budget (--budget-gib, default 20), which
is printed; a new venv waits while the venvs in use already fill the budget. A line whose
requirements cannot be installed (no wheel for this interpreter, a resolver conflict) is
recorded in the manifest with pip's last line and is not a failure of the sweep.

Pairs: with --partners, each release also runs the pair cases (pair.*, and python.pair.*: the
cross-device ones, where the two live on different devices) against one fixed
release of each partner library: the ones installed in the interpreter --partner-python names
(the pinned peers' venv, scripts/peers.sh). The release's own packages come first on the path
and the partners' after them (a throwaway venv whose .pth adds the two site folders in that
order), so the release's NumPy is the one imported. Only the results with the release on one
side are kept; a partner that cannot be imported beside the release is a load error in the log
and its pairs are not run.

A SYCL release (dpnp) carries `env:oneapi` among its requirements: not a package, but the word
that its runs need Intel's OpenCL CPU runtime from its own venv (the venv's lib/ on
LD_LIBRARY_PATH, its libintelocl.so in OCL_ICD_FILENAMES, ONEAPI_DEVICE_SELECTOR=opencl:cpu), as
bin/python-oneapi sets for the pinned oneAPI peer (scripts/oneapi.sh).

--shard K/N splits the list (the i-th selected line, from 0, goes to part i mod N + 1), so a CI
job matrix sweeps in parallel and one job merges the parts' sweep.json files with
`dlpack-validate report merge` (docs/atlas.md). The exit code is 0 when every installable line
was run, whatever the verdicts (the sweep is a survey, not a gate), 2 on bad input, 1 when the
validator itself failed on a line (exit 2 or 3).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

from budget import ENV_WORDS, DiskBudget, make_venv, run_env, venvs  # atlas/budget.py: venvs and the disk budget
from store import (Sources, fingerprints, keep_pairs_of, line_key, load, name_unloaded,  # atlas/store.py
                   partner_key, save, splice, what_to_run, without)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bad(message):
    sys.stderr.write(f"atlas: error: {message}\n")
    sys.exit(2)


def read_releases(path, only):
    lines = []
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        bad(f"cannot read {path}: {e.strerror}")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3 or not all(c.strip() for c in cols):
            bad(f"{path}:{n}: expected SUBJECT<TAB>RELEASE<TAB>REQUIREMENT[<TAB>...], got {line!r}")
        for req in cols[2:]:
            if "==" not in req and not req.startswith("script:") and req not in ENV_WORDS:
                bad(f"{path}:{n}: requirement {req!r} is not pinned (NAME==VERSION)")
        lines.append({"subject": cols[0], "release": cols[1], "requirements": cols[2:]})
    if only:
        wanted = set(only.split(","))
        unknown = wanted - {l["subject"] for l in lines}
        if unknown:
            bad(f"--only: no line for {', '.join(sorted(unknown))} in {path}")
        lines = [l for l in lines if l["subject"] in wanted]
    return lines


def shard_of(lines, shard):
    if not shard:
        return lines
    try:
        k, n = (int(x) for x in shard.split("/"))
        assert 1 <= k <= n
    except (ValueError, AssertionError):
        bad(f"--shard: '{shard}' is not K/N with 1 <= K <= N")
    return [l for i, l in enumerate(lines) if i % n == k - 1]


def site_of(python):
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def layered_python(base, first, second, where):
    """A venv without pip whose path holds `first`'s site-packages, then `second`'s."""
    shutil.rmtree(where, ignore_errors=True)
    subprocess.run([base, "-m", "venv", "--without-pip", where], check=True)
    py = os.path.join(where, "bin", "python")
    with open(os.path.join(site_of(py), "dlpv_layers.pth"), "w") as f:
        for d in (site_of(first), site_of(second)):
            f.write(f"import site; site.addsitedir({d!r})\n")
    return py


def declarations(a, base, pairs):
    """{case id: declaration} of the cases a release runs alone, or of the pair cases."""
    subjects = ["validator", "json"] if pairs else ["validator"]  # --list needs no library: any module names a subject
    filters = ["--filter", "pair.*", "--filter", "python.pair.*"] if pairs else []
    p = subprocess.run([base, "-m", "validator", *subjects, "--list", "--json", "-", *filters], capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=a.validator_path))
    if p.returncode != 0:
        bad(f"cannot list the cases: {p.stderr.strip().splitlines()[-1:] or p.returncode}")
    return {d["id"]: d for d in json.loads(p.stdout)}


def sweep_line(i, line, n, a, disk, partners, jobs, state):
    """One (library, release) line: what the store holds, its venv if anything must run, its run
    (or the cases that changed), its pairs. (manifest entry, records, broken)."""
    label = f"{line['subject']} {line['release']}"
    key = line_key(line, state["base_version"], state["sources"])
    sdir = os.path.join(a.store, f"{line['subject']}-{line['release']}-{key}")
    os.makedirs(sdir, exist_ok=True)
    stem = f"{line['subject']}-{line['release']}"
    mine = [p for p in partners if p != line["subject"]]
    # The partners a sweep paired this release with before stay in its record: the store carries
    # them (run again where their cases changed, unless --reuse-stale), whatever --partners says.
    for f in sorted(os.listdir(sdir)):
        m = re.fullmatch(r"pairs-(\w+)\.json", f)
        if m and m.group(1) not in mine and m.group(1) != line["subject"]:
            mine.append(m.group(1))
    jobs_todo = []  # (fingerprints, stored record, stored fingerprints, output record, partner or None)
    jobs_todo.append((state["alone_fps"], os.path.join(sdir, "run.json"), os.path.join(sdir, "run.fp.json"),
                      os.path.join(a.out, f"{stem}.json"), None))
    for partner in mine:
        salt = partner_key(a, partner, state["sources"])
        fps = {k: v + salt for k, v in state["pair_fps"].items()}
        jobs_todo.append((fps, os.path.join(sdir, f"pairs-{partner}.json"),
                          os.path.join(sdir, f"pairs-{partner}.fp.json"), os.path.join(a.out, f"{stem}.pairs-{partner}.json"),
                          partner))
    plans = []
    stale = 0
    entry_refused = {}
    for fps, srec, sfp, out, partner in jobs_todo:
        refused = partner and load(srec + ".refused-" + partner_key(a, partner, state["sources"]))
        if refused:  # the partner cannot be imported beside this release: a fact of the two venvs, kept
            entry_refused[partner] = refused
            continue
        if a.stored_only and not os.path.exists(srec):  # nothing runs: what the store lacks is left out
            continue
        ids, everything = what_to_run(fps, load(sfp, {}), os.path.exists(srec))
        if a.reuse_stale in ("all", "pairs" if partner else "-") and os.path.exists(srec):
            # as stored: the changed cases are counted, not run
            stale += len(ids)
            ids, everything = [], False
            fps = load(sfp, {})
        plans.append((fps, srec, sfp, out, partner, ids, everything))
    entry = dict(load(os.path.join(sdir, "line.json"), {}), subject=line["subject"], release=line["release"])
    entry.pop("not_installable", None)
    entry.pop("stale_cases", None)
    entry["store"] = os.path.basename(sdir)
    to_run = sum(len(ids) for *_, ids, _ in plans)
    venv = None
    if to_run:
        venv, info = make_venv(line, disk)
        entry.update(info)
        if venv is None:
            print(f"atlas: [{i}/{n}] {label}: not installable here: {info['not_installable']}", file=sys.stderr)
            entry = {k: v for k, v in entry.items() if k in ("subject", "release", "store", "requirements", "not_installable")}
            save(os.path.join(sdir, "line.json"), entry)
            return entry, [], 0
    records, broken = [], 0
    env = dict(os.environ) if entry.get("own_validator") else dict(os.environ, PYTHONPATH=a.validator_path)
    if venv:
        env = run_env(line, venv, env)
    entry["pairs"] = {p: dict(r, stored=True) for p, r in entry_refused.items()}
    py = None
    for fps, srec, sfp, out, partner, ids, everything in plans:
        name = "alone" if partner is None else f"with {partner}"
        if not ids:  # all from the store
            kept = without(srec, set(load(sfp, {})) - set(fps), out)
            name_unloaded(out, line)
            records.append(out)
            if partner is None:
                entry["record"] = os.path.basename(out)
            else:
                entry["pairs"][partner] = dict(entry["pairs"].get(partner, {}), record=os.path.basename(out), results=kept)
            continue
        if partner is not None and "record" not in entry:
            continue
        if partner is not None and entry.get("own_validator"):
            entry["pairs"] = {"*": {"error": "built for another interpreter than the partners' venv: no pairs"}}
            break
        t0 = time.monotonic()
        scratch = out + ".part.json"
        if partner is None:
            repro = ["--repro", os.path.join(a.out, "repro", stem)] if a.repro else []
            cmd = [os.path.join(venv, "bin", "python"), "-m", "validator", line["subject"], "--deterministic", "-q"] \
                + repro + jobs + a.validator_args
        else:
            if py is None:
                py = layered_python(state["base"], os.path.join(venv, "bin", "python"), a.partner_python,
                                    os.path.join(a.out, f".pairs-venv-{stem}"))
            cmd = [py, "-m", "validator", line["subject"], partner, "--deterministic", "-q"] + jobs + a.validator_args
            if everything:
                cmd += ["--filter", "pair.*", "--filter", "python.pair.*"]
        target = out if everything else scratch
        filters = [] if everything else [x for c in ids for x in ("--filter", c)]
        p = subprocess.run(cmd + ["--json", target] + filters, capture_output=True, text=True, env=env)
        took = round(time.monotonic() - t0, 1)
        why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        ok = p.returncode in (0, 1) and os.path.exists(target)
        if ok and partner is not None:
            keep_pairs_of(target, 0)
        if ok and not everything:
            kept_path = out + ".kept.json"
            without(srec, set(ids) | (set(load(sfp, {})) - set(fps)), kept_path)
            splice(a, kept_path, scratch, out)
            for f in (kept_path, scratch):
                os.remove(f)
        ran = f"{len(ids)} case(s) changed since the stored sweep" if not everything else "every case"
        if ok:
            shutil.copyfile(out, srec)
            save(sfp, fps)
            name_unloaded(out, line)
            records.append(out)
            verdict = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
            if partner is None:
                entry.update(record=os.path.basename(out), run_s=took, exit_code=p.returncode, ran=ran,
                             validator_commit=state["commit"])
                entry.pop("seeded", None)
            else:
                entry["pairs"][partner] = {"record": os.path.basename(out), "s": took, "ran": ran,
                                           "results": len(load(out)["results"])}
                verdict = f"{entry['pairs'][partner]['results']} pair results"
        else:
            verdict = why
            if partner is None:
                broken = 1
                entry.update(error=why, run_s=took, exit_code=p.returncode)
            else:
                entry["pairs"][partner] = {"error": why, "s": took}
                verdict = f"pairs not run: {why}"
                if p.returncode == 2 and "cannot load Python subject" in why:  # not retried while both venvs stay
                    save(srec + ".refused-" + partner_key(a, partner, state["sources"]), entry["pairs"][partner])
        print(f"atlas: [{i}/{n}] {label} {name}: {verdict} ({ran}; {took} s)", file=sys.stderr)
    if not to_run:
        print(f"atlas: [{i}/{n}] {label}: unchanged, from the store", file=sys.stderr)
    entry["from_store"] = not to_run
    if stale:
        entry["stale_cases"] = stale
    save(os.path.join(sdir, "line.json"), entry)
    if venv:
        disk.release(venv)
    return entry, records, broken


def seed(a, lines, partners, state, decls):
    """Fills the store from a sweep's output folder made before the store existed (its records and
    sweep-manifest.json), with the fingerprints its cases had at that commit, so that the next
    sweep re-runs only what changed since."""
    old = Sources(a.commit)
    manifest = {(m["subject"], m["release"]): m for m in load(os.path.join(a.seed_from, "sweep-manifest.json"),
                                                              {"lines": []})["lines"]}
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", a.commit], capture_output=True, text=True).stdout.strip()

    def fps_of(record, salt=""):
        out = {}
        for r in load(record)["results"]:
            src = decls.get(r["id"], {}).get("source")
            out[r["id"]] = old.fingerprint(r, src) + salt
        return out

    seeded = 0
    for line in lines:
        stem = f"{line['subject']}-{line['release']}"
        rec = os.path.join(a.seed_from, f"{stem}.json")
        if not os.path.exists(rec):
            continue
        sdir = os.path.join(a.store, f"{stem}-{line_key(line, state['base_version'], old)}")
        os.makedirs(sdir, exist_ok=True)
        shutil.copyfile(rec, os.path.join(sdir, "run.json"))
        save(os.path.join(sdir, "run.fp.json"), fps_of(rec))
        entry = dict(manifest.get((line["subject"], line["release"]), {}), validator_commit=commit, seeded=True)
        for partner in partners:
            prec = os.path.join(a.seed_from, f"{stem}.pairs-{partner}.json")
            if os.path.exists(prec):
                shutil.copyfile(prec, os.path.join(sdir, f"pairs-{partner}.json"))
                save(os.path.join(sdir, f"pairs-{partner}.fp.json"), fps_of(prec, partner_key(a, partner, old)))
            why = entry.get("pairs", {}).get(partner, {}).get("error", "")
            if "cannot load Python subject" in why:
                save(os.path.join(sdir, f"pairs-{partner}.json.refused-{partner_key(a, partner, state['sources'])}"),
                     entry["pairs"][partner])
        save(os.path.join(sdir, "line.json"), entry)
        seeded += 1
    print(f"atlas: seeded {seeded} release(s) into {a.store} from {a.seed_from} (validator {commit[:12]})", file=sys.stderr)
    return 0


def main():
    ap = argparse.ArgumentParser(prog="atlas/sweep.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["plan", "run", "seed"])
    ap.add_argument("--store", help="what earlier sweeps found, per release (default $DLPV_CACHE/atlas-store)")
    ap.add_argument("--from", dest="seed_from", help="seed: a sweep's output folder made before the store existed")
    ap.add_argument("--commit", help="seed: the commit of the validator that made it")
    ap.add_argument("--releases", default=os.path.join(ROOT, "atlas", "releases.tsv"))
    ap.add_argument("--only", help="comma-separated subjects (numpy,jax)")
    ap.add_argument("--allow-dirty", action="store_true",
                    help="run from a checkout with uncommitted changes (the page then says so; not for publishing)")
    ap.add_argument("--shard", help="K/N: part K of N of the list")
    ap.add_argument("--out", help="the output folder (run)")
    ap.add_argument("--partners", help="comma-separated partner libraries for the pair cases (torch,jax)")
    ap.add_argument("--partner-python", help="the interpreter the partners are installed for (the peers' venv)")
    ap.add_argument("--repro", action="store_true",
                    help="also write reproducers of each release's unexpected results (DIR/repro/<library>-<release>/)")
    ap.add_argument("--reuse-stale", nargs="?", const="all", choices=["all", "pairs"],
                    help="take a release's stored records as they are even where cases changed since (counted in the "
                         "manifest as stale_cases, and shown on the page): all of them, to render the atlas without "
                         "running, or only the pair records (the releases alone are brought up to date)")
    ap.add_argument("--stored-only", action="store_true",
                    help="run nothing: the atlas from the store as it is (--reuse-stale all), leaving out the "
                         "releases and partners it has no record of")
    ap.add_argument("--budget-gib", type=float, default=20.0)
    ap.add_argument("--parallel", type=int, default=0,
                    help="releases run side by side (default: the cores), within the disk budget")
    ap.add_argument("--validator-path", default=os.path.join(ROOT, "build", "python"),
                    help="where the validator package is (PYTHONPATH; default build/python)")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "dlpack-validate"),
                    help="dlpack-validate, for report merge (default build/dlpack-validate)")
    ap.add_argument("validator_args", nargs="*", help="after --: more python -m validator options")
    a = ap.parse_args()
    lines = shard_of(read_releases(a.releases, a.only), a.shard)
    if a.command == "plan":
        for l in lines:
            print(f"{l['subject']}\t{l['release']}\t{' '.join(l['requirements'])}")
        return 0
    if a.command == "seed":
        if not (a.seed_from and a.commit):
            bad("seed needs --from DIR and --commit REV")
    elif not a.out:
        bad("run needs --out DIR")
    if not os.path.exists(os.path.join(a.validator_path, "validator")):
        bad(f"--validator-path {a.validator_path}: no validator package there (build it: scripts/build.sh)")
    partners = [p for p in (a.partners or "").split(",") if p]
    if partners and not a.partner_python:
        bad("--partners needs --partner-python (the pinned peers' venv: bash scripts/peers.sh)")
    cache = venvs.root()
    a.store = a.store or os.path.join(cache, "atlas-store")
    base = os.environ.get("DLPV_PYTHON", "/usr/bin/python3")
    sources = Sources()
    alone, pairs = declarations(a, base, False), declarations(a, base, True)
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=40"], capture_output=True,
                            text=True).stdout.strip()
    if commit.endswith("-dirty") and a.command == "run" and not a.allow_dirty:
        # A published verdict names the build that made it; a build of uncommitted code names nothing
        # anyone can check out again.
        bad("the checkout has uncommitted changes: commit them first (the page names the validator build of "
            "every verdict), or pass --allow-dirty for a sweep that is not to be published")
    state = {"commit": commit, "base": base, "base_version": venvs.base_version(base), "sources": sources,
             "alone_fps": fingerprints(alone, sources), "pair_fps": fingerprints(pairs, sources)}
    if a.stored_only:
        a.reuse_stale = "all"
    if a.command == "seed":
        return seed(a, lines, partners, state, {**alone, **pairs})
    os.makedirs(a.out, exist_ok=True)
    budget = int(a.budget_gib * 2**30)
    disk = DiskBudget(budget, cache)
    print(f"atlas: {len(lines)} release(s){' (shard ' + a.shard + ')' if a.shard else ''}; store {a.store}; venvs in "
          f"{cache}/atlas, made with uv (its cache {cache}/uv); disk budget {a.budget_gib:g} GiB for both, "
          f"{disk.used() / 2**30:.1f} GiB used", file=sys.stderr)
    t_all = time.monotonic()
    side = max(1, min(a.parallel or len(os.sched_getaffinity(0)), len(lines)))
    # Each release's run gets its share of the cores (-j), unless the caller chose one.
    jobs = [] if any(x in ("-j", "--jobs") or x.startswith(("-j", "--jobs=")) for x in a.validator_args) else \
        ["-j", str(max(1, len(os.sched_getaffinity(0)) // side))]
    print(f"atlas: {side} release(s) side by side, each run with {' '.join(jobs) or 'its own -j'}", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=side) as pool:
        done = list(pool.map(lambda il: sweep_line(il[0], il[1], len(lines), a, disk, partners, jobs, state),
                             enumerate(lines, 1)))
    manifest = [entry for entry, _, _ in done]
    records = [r for _, rs, _ in done for r in rs]
    broken = sum(b for _, _, b in done)
    sweep = os.path.join(a.out, "sweep.json")
    if os.path.exists(sweep):  # the page's "what changed" compares the two (atlas/page.py --previous)
        os.replace(sweep, os.path.join(a.out, "sweep-previous.json"))
    if records:
        p = subprocess.run([a.cli, "report", "merge", *records, "-o", sweep, "-q"], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            bad(f"report merge: {p.stderr.strip()}")
    used = disk.used()
    releases = os.path.abspath(a.releases)
    releases = os.path.relpath(releases, ROOT) if releases.startswith(ROOT + os.sep) else os.path.basename(releases)
    json.dump({"releases": releases, "shard": a.shard, "wall_s": round(time.monotonic() - t_all, 1),
               "disk_gib": round(used / 2**30, 1), "lines": manifest},
              open(os.path.join(a.out, "sweep-manifest.json"), "w"), indent=1)
    ran = sum("record" in m for m in manifest)
    stored = sum(bool(m.get("from_store")) for m in manifest)
    print(f"atlas: {ran} of {len(lines)} release(s) in the record ({stored} unchanged, from the store), "
          f"{sum('not_installable' in m for m in manifest)} not installable, {broken} broken; "
          f"{round(time.monotonic() - t_all)} s; venvs and uv's cache {used / 2**30:.1f} GiB on disk; merged record "
          f"{sweep if records else '(none)'}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
