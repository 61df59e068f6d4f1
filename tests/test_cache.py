"""numba's disk cache: kept outside the package, keyed by the version and the sources,
so that an edited callee in another file is compiled again, never read stale."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import engine
from engine import _cache

PACKAGE = Path(engine.__file__).resolve().parent

# Prices a path over a steep hill (x 4 to 6, crest at 5): `walk_path`
# (search/_kernels/trail.py) calls `fold` (terrain/_kernels.py), a callee in another file.
PRICE = """
import engine, numba
rules = engine.load_rules("fantasy-warlord")
bf = engine.load_map({"type": "FeatureCollection",
    "battlefield": {"width": 10, "height": 4, "units": "cm"},
    "features": [{"type": "Feature",
        "properties": {"terrain": "hill", "elevation": 1, "steep": True},
        "geometry": {"type": "Polygon",
                     "coordinates": [[[4, 0], [6, 0], [6, 4], [4, 4], [4, 0]]]}}]})
g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
print(numba.config.CACHE_DIR)
print(engine.price_path(g, [(1.0, 2.0), (9.0, 2.0)]).cost)
"""


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(PACKAGE, root / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _price(root: Path, cache: Path) -> tuple[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(root), XDG_CACHE_HOME=str(cache))
    out = subprocess.run([sys.executable, "-c", PRICE], cwd=root, env=env, check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return out[0], float(out[1])


def test_the_source_hash_follows_every_file(tmp_path):
    root = _copy(tmp_path)
    before = _cache.source_hash(root / "engine")
    assert before == _cache.source_hash(root / "engine")
    kernels = root / "engine" / "terrain" / "_kernels.py"
    kernels.write_text(kernels.read_text() + "\n# an edit\n")
    assert _cache.source_hash(root / "engine") != before


def test_the_cache_lives_outside_the_package(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = _cache.cache_folder()
    assert folder.parent == tmp_path / "tabletop-movement"
    assert folder.name == f"numba-{engine.__version__}-{_cache.source_hash()}"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert _cache.cache_folder() == tmp_path / "mine"


def test_an_edited_callee_in_another_file_is_compiled_again(tmp_path):
    root = _copy(tmp_path)
    cache = tmp_path / "cache"
    folder, cost = _price(root, cache)
    assert Path(folder).parent == cache / "tabletop-movement"
    assert any(Path(folder).rglob("*.nbi"))  # the kernels were cached there
    assert _price(root, cache) == (folder, cost)  # the same sources: the same folder
    kernels = root / "engine" / "terrain" / "_kernels.py"
    text = kernels.read_text()
    edited = text.replace("    m_a = steep if", "    m_a = 3.0 * steep if", 1)
    assert edited != text
    kernels.write_text(edited)  # climbing to the crest now costs 6 a cm, not 2
    folder2, cost2 = _price(root, cache)
    assert folder2 != folder
    assert abs(cost - (3 + 2 + 1 + 3)) < 1e-9 and abs(cost2 - (3 + 6 + 1 + 3)) < 1e-9
