"""The build backend of corral-client (PEP 517 and PEP 660), in the
source tree and standard library only, so that `pip install` and `pip
wheel` build the package without fetching a build system from an index
(pip's isolated build installs nothing for it).

It reads the [project] table of pyproject.toml (with tomllib, or on
Python 3.10 a reader of the simple subset that file uses) and packs
src/corral_client into a pure-Python wheel, an sdist, or an editable
wheel whose .pth file points at src/.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "corral_client"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _project() -> dict:
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
        return tomllib.loads(text)["project"]
    except ImportError:
        return _read_project(text)


def _read_project(text: str) -> dict:
    """The [project] table of a pyproject.toml that writes only strings
    and one-line arrays of strings in it (Python 3.10 has no tomllib)."""
    out: dict = {}
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]").strip()
            continue
        if section != "project" or "=" not in line:
            continue
        k, _, v = line.partition("=")
        k, v = k.strip(), v.strip()
        if v.startswith("["):
            out[k] = re.findall(r'"([^"]*)"', v)
        elif v.startswith("{"):
            out[k] = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', v))
        else:
            out[k] = v.strip('"')
    return out


def _names() -> tuple[str, str, str]:
    p = _project()
    dist = re.sub(r"[-_.]+", "_", p["name"]).lower()
    return p["name"], dist, p["version"]


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append(f"License: {lic['text']}")
    for c in p.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    for k in p.get("keywords", []):
        lines.append(f"Keywords: {k}")
    readme = ROOT / (p.get("readme") or "README.md")
    body = ""
    if readme.is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + readme.read_text()
    return "\n".join(lines) + "\n" + body


def _sources() -> list[Path]:
    pkg = ROOT / "src" / PACKAGE
    return sorted(p for p in pkg.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(directory: str, files: dict[str, bytes]) -> str:
    _, dist, version = _names()
    info = f"{dist}-{version}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: corral_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{name},{_hash(data)},{len(data)}" for name, data in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            zi = zipfile.ZipInfo(path, _EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    src = ROOT / "src"
    return _write_wheel(wheel_directory, {p.relative_to(src).as_posix(): p.read_bytes() for p in _sources()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {f"{PACKAGE}.pth": (str(ROOT / "src") + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    _, dist, version = _names()
    base = f"{dist}-{version}"
    name = f"{base}.tar.gz"
    members = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve(), *_sources()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arc: str, data: bytes) -> None:
            ti = tarfile.TarInfo(f"{base}/{arc}")
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 0
            tar.addfile(ti, io.BytesIO(data))
        for p in members:
            if p.is_file():
                add(p.relative_to(ROOT).as_posix(), p.read_bytes())
        add("PKG-INFO", _metadata().encode())
    return name
