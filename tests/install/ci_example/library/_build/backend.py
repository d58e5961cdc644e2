"""A minimal PEP 517 backend for the stand-in library of examples.ci_workflow.

It zips the package folder `fakearray/` (compiled extension included) into a wheel, so that
`pip install .` works offline, with no build requirements to fetch. Only what pip calls for a
plain install is here: build_wheel (pip falls back to it for the metadata)."""
import base64
import hashlib
import os
import zipfile

NAME, VERSION, PACKAGE = "fakearray", "0.0.0", "fakearray"
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = []
    for folder, dirs, names in os.walk(os.path.join(root, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                files.append((os.path.relpath(path, root), f.read()))
    if not files:
        raise RuntimeError(f"no {PACKAGE}/ beside pyproject.toml: nothing to install")
    files.append((f"{DIST_INFO}/METADATA",
                  f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n".encode()))
    files.append((f"{DIST_INFO}/WHEEL",
                  b"Wheel-Version: 1.0\nGenerator: ci_example backend\nRoot-Is-Purelib: false\n"
                  b"Tag: py3-none-any\n"))
    record = [_record_line(arcname, data) for arcname, data in files]
    record.append(f"{DIST_INFO}/RECORD,,")
    files.append((f"{DIST_INFO}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            z.writestr(arcname, data)
    return wheel
