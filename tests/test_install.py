"""The README's two set-up commands, one after the other, in one fresh venv.

``pip install .`` then a query (which compiles and caches numba kernels), then
``pip install -e .``.  While numba cached inside the package, the cache files
kept ``site-packages/engine/`` alive after pip removed the regular install; that
leftover folder shadowed the editable install and every ``engine`` call ended in
a traceback.  The cache now lives in the user's cache folder (engine/_cache.py).

The scratch venv sees the running interpreter's installed dependencies through
a ``.pth`` file (numpy, numba, ... are not downloaded); only pip's isolated build
fetches ``setuptools>=77``.  Offline, the build falls back to
``--no-build-isolation`` when a setuptools>=77 is visible, else the test skips.
The project is built from a copy of its files, never from the checkout.
"""

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform in ("win32", "darwin"),
                       reason="XDG_CACHE_HOME steers the engine's cache on Linux and BSD only"),
]

QUICK = 60  # seconds: venv creation, --version, --help, an import
PIP = 240  # an install, with an isolated build that may download setuptools
QUERY = 240  # the first query of a new install compiles its kernels

OFFLINE = ("Could not find a version that satisfies the requirement setuptools",
           "No matching distribution found for setuptools")


def _run(cmd, *, env, cwd, timeout):
    return subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, timeout=timeout,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)


def _ok(proc):
    """Exit code 0 and no traceback on stderr."""
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, (
        f"{proc.args}\nexit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}")
    return proc.stdout


def _copy_sources(dest: Path) -> Path:
    """The checkout's files (tracked, plus new ones not ignored) copied to ``dest``:
    no build/, no egg-info, no __pycache__, nothing written into the checkout."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], capture_output=True, check=True, timeout=QUICK).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout: {exc}")
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file may be deleted in the working tree
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    assert (dest / "pyproject.toml").is_file() and (dest / "engine" / "__init__.py").is_file()
    return dest


def _numba_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


def _setuptools_major(python, env, cwd) -> int:
    out = _run([python, "-c", "import setuptools; print(setuptools.__version__)"],
               env=env, cwd=cwd, timeout=QUICK)
    return int(out.stdout.split(".")[0]) if out.returncode == 0 else 0


def test_install_then_editable_install_in_one_venv(tmp_path):
    src = _copy_sources(tmp_path / "src")
    elsewhere = tmp_path / "elsewhere"  # the cwd of every command: outside the sources
    elsewhere.mkdir()
    cache = tmp_path / "xdg-cache"
    venv = tmp_path / "venv"
    bin_ = venv / "bin"
    python, pip, cli = bin_ / "python", [bin_ / "python", "-m", "pip"], bin_ / "engine"

    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(XDG_CACHE_HOME=str(cache), VIRTUAL_ENV=str(venv),
               PATH=f"{bin_}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")

    _ok(_run([sys.executable, "-m", "venv", venv], env=env, cwd=elsewhere, timeout=QUICK))
    site_packages = Path(_ok(_run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        env=env, cwd=elsewhere, timeout=QUICK)).strip())
    # The running interpreter's dependencies, after the scratch venv's own packages.
    # Only the folders go on sys.path: their .pth files (the running venv's editable
    # install of engine among them) are not processed.
    shared = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE and Path(site.getusersitepackages()).is_dir():
        shared.append(site.getusersitepackages())
    (site_packages / "_running_interpreter.pth").write_text("".join(f"{p}\n" for p in shared))

    before = _run([python, "-c", "import numba, numpy, scipy, networkx, shapely, matplotlib\n"
                   "import engine"], env=env, cwd=elsewhere, timeout=QUICK)
    assert "No module named 'engine'" in before.stderr, (
        f"the scratch venv must import its dependencies but not the running interpreter's "
        f"engine:\n{before.stderr[-3000:]}")

    # 1. The README's first command: a regular install, then a query.
    build = []
    install = _run([*pip, "install", "--no-deps", src], env=env, cwd=elsewhere, timeout=PIP)
    if install.returncode != 0 and any(s in install.stdout + install.stderr for s in OFFLINE):
        # Offline: build with a setuptools>=77 already here, if there is one.  The
        # scratch venv's own (Python 3.11's ensurepip brings 65.5) would shadow it.
        if _setuptools_major(python, env, elsewhere) < 77:
            _run([*pip, "uninstall", "-y", "setuptools"], env=env, cwd=elsewhere, timeout=PIP)
        if _setuptools_major(python, env, elsewhere) < 77:
            pytest.skip("pip's isolated build could not fetch setuptools>=77 (offline?) and "
                        "the running interpreter has none")
        build = ["--no-build-isolation"]
        install = _run([*pip, "install", "--no-deps", *build, src],
                       env=env, cwd=elsewhere, timeout=PIP)
    _ok(install)
    package = site_packages / "engine"
    where = _ok(_run([python, "-c", "import engine; print(engine.__file__)"],
                     env=env, cwd=elsewhere, timeout=QUICK)).strip()
    assert Path(where) == package / "__init__.py"

    query = [cli, "reach", src / "maps" / "demo.geojson", "--race", "humans", "--at", "30,40"]
    first = _run(query, env=env, cwd=elsewhere, timeout=QUERY)
    answer = _ok(first)
    assert "reachable" in answer
    assert first.stderr.count("compiling kernels, first run only") == 1, first.stderr
    again = _run(query, env=env, cwd=elsewhere, timeout=QUERY)
    assert _ok(again) == answer and again.stderr == "", again.stderr  # from the cache
    assert not _numba_files(package), "numba cached inside the installed package"
    cached = _numba_files(cache / "tabletop-movement")
    assert any(p.suffix == ".nbi" for p in cached), "the query compiled and cached no kernel"

    # 2. The README's second command, in the same venv: an editable install.
    _ok(_run([*pip, "install", "--no-deps", *build, "-e", src],
             env=env, cwd=elsewhere, timeout=PIP))
    assert not package.exists(), (
        f"the regular install left files behind, shadowing the editable one: "
        f"{sorted(str(p.relative_to(package)) for p in package.rglob('*'))[:20]}")

    out = _ok(_run([cli, "--version"], env=env, cwd=elsewhere, timeout=QUICK))
    assert "tabletop-movement" in out
    assert "usage" in _ok(_run([cli, "--help"], env=env, cwd=elsewhere, timeout=QUICK))
    assert _ok(_run(query, env=env, cwd=elsewhere, timeout=QUERY)) == answer
    out = _ok(_run([python, "-c", "import engine; print(engine.load_rules, engine.__file__)"],
                   env=env, cwd=elsewhere, timeout=QUICK)).split()
    assert Path(out[-1]) == src / "engine" / "__init__.py"
    assert "function load_rules" in " ".join(out)
    assert len(_numba_files(cache / "tabletop-movement")) > len(cached), (
        "the editable install's query cached no kernel of its own")
    assert not _numba_files(src), "numba cached inside the source folder"
