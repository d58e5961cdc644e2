"""atlas/store.py: what the atlas has swept, so that a sweep re-runs only what it must (the
fingerprints of cases and releases, and the records kept per release), with the record helpers
the sweep splices them with. atlas/sweep.py's `run` and `seed` use it."""
import ast
import hashlib
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# # A case's fingerprint is a hash of its declaration (id, title, severity, requirements, role,
# parameters), of the source file that declares it, of its lines in the identity manifest
# (tests/identity/manifest.tsv: its verdicts on every fixture, which CI keeps in step with the
# code, so a change to shared code that alters what a case says shows there), and of EPOCH.
# A release's place in the store is keyed by its requirements, the interpreter and its adapter's
# files. A sweep runs a release's cases whose fingerprint is new or changed, and takes the rest
# from the store; a release with nothing changed needs no venv at all.
EPOCH = "1"  # bump to re-run every case of every release (a change no fixture shows)
FP_FIELDS = ("id", "title", "severity", "requirements", "role", "params")
LAYOUTS_FILE = "python_shim/validator/adapters/_numpy_layouts.py"


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


class Sources:
    """File texts and identity-manifest lines, from the checkout or from a commit (seed)."""

    def __init__(self, commit=None):
        self.commit = commit
        self.files = {}
        manifest = self.text("tests/identity/manifest.tsv")
        self.manifest = {}
        for row in manifest.splitlines():
            cols = row.split("\t")
            if len(cols) >= 3 and cols[0] == "case":
                self.manifest.setdefault(cols[1], []).append(cols[2])
        # subject -> its built-in adapter's module, as of this tree: the library table's adapter
        # column (python_shim/validator/libraries.tsv); a tree from before the table, the
        # BUILTIN map written out in the adapters' __init__.py
        table = self.text("python_shim/validator/libraries.tsv")
        if table:
            rows = [line.split("\t") for line in table.splitlines() if line and not line.startswith("#")]
            self.adapter_modules = {r[0]: r[1] for r in rows[1:] if len(r) > 1 and r[1] != "-"}
        else:
            self.adapter_modules = dict(re.findall(r'"(\w+)": "validator\.adapters\.(\w+)"',
                                                   self.text("python_shim/validator/adapters/__init__.py")))

    def text(self, path):
        if path not in self.files:
            if self.commit:
                p = subprocess.run(["git", "-C", ROOT, "show", f"{self.commit}:{path}"], capture_output=True, text=True)
                self.files[path] = p.stdout if p.returncode == 0 else ""
            else:
                try:
                    self.files[path] = open(os.path.join(ROOT, path), encoding="utf-8").read()
                except OSError:
                    self.files[path] = ""
        return self.files[path]

    def fingerprint(self, decl, source):
        core = json.dumps({k: decl.get(k) for k in FP_FIELDS}, sort_keys=True)
        return sha("\n".join([core, sha(self.text(source)) if source else "", *self.manifest.get(decl["id"], []), EPOCH]))[:16]

    def adapter(self, subject):
        """The code of the subject's adapter (and of the NumPy-backed base it builds on), less
        comments and docstrings: a reworded comment re-runs nothing."""
        module = self.adapter_modules.get(subject)
        if not module:
            return ""
        text = self.text(f"python_shim/validator/adapters/{module}.py")
        files = [text] + ([self.text(LAYOUTS_FILE)] if "_numpy_layouts" in text else [])
        return sha("".join(code_digest(t) for t in files))[:12]


def code_digest(text):
    """A Python file's code: its syntax tree without docstrings (comments are not in it)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return sha(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return sha(ast.dump(tree))


def fingerprints(decls, sources, salt=""):
    return {i: sources.fingerprint(d, d.get("source")) + salt for i, d in decls.items()}


def line_key(line, base_version, sources):
    return sha("\n".join(line["requirements"]) + "\n" + base_version + sources.adapter(line["subject"]))[:12]


def partner_key(a, partner, sources):
    return sha(os.path.realpath(a.partner_python) + sources.adapter(partner))[:8]


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def save(path, data):
    with open(path + ".part", "w") as f:
        json.dump(data, f)
    os.replace(path + ".part", path)


def without(record_path, ids, out_path):
    """The record at record_path less the results of `ids`, written to out_path; how many kept."""
    rec = load(record_path)
    rec["results"] = [r for r in rec["results"] if r["id"] not in ids]
    save(out_path, rec)
    return len(rec["results"])


def name_unloaded(record_path, line):
    """A release that could not be loaded reports no name of its own ('(not loaded)'): the record
    names it by its line, so that releases which all fail to load stay apart in the merge."""
    rec = load(record_path)
    subjects = rec.get("subjects") or []
    if subjects and subjects[0].get("name") == "(not loaded)":
        subjects[0]["name"] = f"{line['subject']} {line['release']}"
        subjects[0].setdefault("notes", []).append("named by the atlas's release list: the subject did not load")
        save(record_path, rec)


def splice(a, kept, fresh, out_path):
    """One record: `kept` (the store's, less what was re-run) and `fresh` (what was re-run)."""
    p = subprocess.run([a.cli, "report", "merge", kept, fresh, "-o", out_path, "-q"], capture_output=True, text=True)
    if p.returncode not in (0, 1) or not os.path.exists(out_path):
        raise RuntimeError(f"report merge: {p.stderr.strip()}")


def what_to_run(fps, stored_fps, have_record):
    """(case ids to run, all of them?) given the current and the stored fingerprints."""
    if not have_record or not stored_fps:
        return sorted(fps), True
    stale = sorted(i for i, f in fps.items() if stored_fps.get(i) != f)
    return stale, len(stale) == len(fps)


def keep_pairs_of(record_path, subject_index):
    """Drop the results that do not have `subject_index` on exactly one side (the release alone
    ran its own pairs; partner-with-partner pairs belong to no release)."""
    rec = json.load(open(record_path))
    def mine(r):
        return (r["subject"] == subject_index) != (r.get("peer") == subject_index)
    rec["results"] = [r for r in rec["results"] if mine(r)]
    rec["pair_matrix"] = [c for c in rec.get("pair_matrix", [])
                          if (c["producer"] == subject_index) != (c["consumer"] == subject_index)]
    rec["incidents"] = [i for i in rec.get("incidents", []) if i.get("subject") in (None, subject_index)]
    json.dump(rec, open(record_path, "w"))
    return len(rec["results"])
