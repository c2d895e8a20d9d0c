"""`pip install ./clients/python` and a built wheel both work offline
(no index is asked: the build backend is the standard library one in
_build/), into fresh virtual environments."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent

CHECK = ("import corral_client, pathlib, sys; "
         "p = pathlib.Path(corral_client.__file__).parent; "
         "assert 'site-packages' in str(p), p; "
         "assert (p / 'py.typed').is_file(); "
         "print(corral_client.__version__, corral_client.Client('127.0.0.1:1', 't').url)")


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def has_pip() -> None:
    if pip("--version").returncode != 0:
        pytest.skip(f"SKIP: {sys.executable} has no pip (Debian: apt-get install python3-pip)")


def venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return path / "bin" / "python"


def installed(python: Path, tmp: Path) -> str:
    out = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True, cwd=tmp, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_pip_install_of_the_directory(has_pip: None, tmp_path: Path) -> None:
    py = venv(tmp_path / "venv")
    r = pip("--python", str(py), "install", "--no-index", str(PKG))
    assert r.returncode == 0, r.stdout + r.stderr
    assert installed(py, tmp_path).startswith("0.1.0 http://127.0.0.1:1")


def test_a_built_wheel_installs(has_pip: None, tmp_path: Path) -> None:
    r = pip("wheel", "--no-index", "--no-deps", "-w", str(tmp_path / "dist"), str(PKG))
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = list((tmp_path / "dist").glob("corral_client-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "corral_client/py.typed" in names and "corral_client-0.1.0.dist-info/RECORD" in names
    assert not [n for n in names if "tests/" in n or "__pycache__" in n]
    py = venv(tmp_path / "venv")
    r = pip("--python", str(py), "install", "--no-index", str(wheels[0]))
    assert r.returncode == 0, r.stdout + r.stderr
    installed(py, tmp_path)


def test_the_sdist_builds_a_wheel_too(tmp_path: Path) -> None:
    sys.path.insert(0, str(PKG / "_build"))
    try:
        import corral_build
    finally:
        sys.path.pop(0)
    name = corral_build.build_sdist(str(tmp_path))
    import tarfile
    with tarfile.open(tmp_path / name) as t:
        members = t.getnames()
        t.extractall(tmp_path / "x")
    assert "corral_client-0.1.0/PKG-INFO" in members and "corral_client-0.1.0/src/corral_client/py.typed" in members
    meta = corral_build._read_project((PKG / "pyproject.toml").read_text())
    assert meta["name"] == "corral-client" and meta["requires-python"] == ">=3.10"
