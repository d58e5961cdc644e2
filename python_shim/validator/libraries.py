"""validator.libraries: the table of the libraries dlpack-validate knows by name
(libraries.tsv beside this file; its header says who reads it). Pure Python, no compiled module:
the supervisor and the scripts read it without importing anything under test."""
import os

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libraries.tsv")
COLUMNS = ("name", "adapter", "pins", "gate", "import", "make", "from")


def read(path=TABLE, text=None):
    """The rows, in the table's order: dicts over COLUMNS, with `-` read as None."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    rows, header = [], None
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            if tuple(header) != COLUMNS:
                raise ValueError(f"{path}: columns {header}, expected {list(COLUMNS)}")
            continue
        if len(cells) != len(COLUMNS):
            raise ValueError(f"{path}: {len(cells)} cells in {line!r}, expected {len(COLUMNS)}")
        rows.append({k: (None if v == "-" else v) for k, v in zip(COLUMNS, cells)})
    return rows


def builtin(rows=None):
    """name -> module of its built-in adapter."""
    return {r["name"]: "validator.adapters." + r["adapter"] for r in (rows or read()) if r["adapter"]}


def recipes(rows=None):
    """(make, from): name -> (import line, make expression), name -> from_dlpack expression."""
    rows = rows or read()
    return ({r["name"]: (r["import"], r["make"]) for r in rows if r["make"]},
            {r["name"]: r["from"] for r in rows if r["from"]})
