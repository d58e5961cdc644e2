#!/usr/bin/env python3
"""atlas/tests/check_budget.py (CTest atlas.disk_budget): the sweep's disk budget
(atlas/budget.py DiskBudget.make_room) on made-up venvs, no network. Four release venvs of 1 MiB
each under a temporary cache, their stamps aged oldest first; a fifth file hard-linked into two
of them (shared disk, counted once). With a 2.5 MiB budget, making a new venv evicts the least
recently used ones until the rest fit, but never the one this sweep uses, nor the one another
process holds in use (a shared flock on its .dlpv-in-use file, taken by a child process).
Also: scripts/venvs.py du counts a hard-linked file once."""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    with tempfile.TemporaryDirectory() as cache:
        os.environ["DLPV_CACHE"] = cache
        sys.path.insert(0, os.path.join(ROOT, "atlas"))
        import budget  # noqa: E402  atlas/budget.py (reads DLPV_CACHE at call time)
        venvs = budget.venvs
        atlas = os.path.join(cache, "atlas")
        names = ["old-a", "old-b", "held-elsewhere", "mine"]
        for age, n in enumerate(names):
            d = os.path.join(atlas, n)
            os.makedirs(d)
            with open(os.path.join(d, "payload"), "wb") as f:
                f.write(os.urandom(1 << 20))
            stamp = os.path.join(d, "dlpv-atlas.json")
            open(stamp, "w").write("{}")
            t = time.time() - 1000 + age * 10  # old-a is the least recently used
            os.utime(stamp, (t, t))
        shared = os.path.join(atlas, "old-b", "shared")
        open(shared, "wb").write(os.urandom(1 << 19))
        os.link(shared, os.path.join(atlas, "mine", "shared"))
        problems = []
        together = venvs.du(os.path.join(atlas, "old-b"), os.path.join(atlas, "mine"))
        apart = venvs.du(os.path.join(atlas, "old-b")) + venvs.du(os.path.join(atlas, "mine"))
        if apart - together < (1 << 19):
            problems.append(f"du counts the hard-linked file twice: together {together}, apart {apart}")
        # another process holds held-elsewhere in use, as a second sweep on the cache would
        holder = subprocess.Popen([sys.executable, "-c",
                                   "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                                   "fcntl.flock(f, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)",
                                   os.path.join(atlas, "held-elsewhere", ".dlpv-in-use")], stdout=subprocess.PIPE,
                                  text=True)
        holder.stdout.readline()
        try:
            disk = budget.DiskBudget(int(2.5 * (1 << 20)), cache)
            disk.use(os.path.join(atlas, "mine"))
            disk.make_room(os.path.join(atlas, "new"))
        finally:
            holder.kill()
        left = sorted(n for n in os.listdir(atlas) if os.path.isdir(os.path.join(atlas, n)))
        if left != ["held-elsewhere", "mine"]:
            problems.append(f"after make_room: {left}, expected the two in use left (held-elsewhere, mine)")
        if problems:
            print("\n".join("FAIL: " + p for p in problems))
            return 1
        print(f"ok: evicted the least recently used venvs not in use; kept {left}; hard-linked file counted once "
              f"({together} bytes together, {apart} apart)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
