"""The documents describe the product as it stands, inside the repository, and their
examples run and print what they show."""

import contextlib
import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import engine

from .conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PROSE = [p for p in (README, ROOT / "CHANGELOG.md", *DOCS, ROOT / "bench" / "README.md",
                     *sorted((ROOT / "engine" / "rules").glob("*.toml"))) if p.is_file()]
LINKED = [README, *DOCS, ROOT / "bench" / "README.md"]

MONTHS = ("January|February|March|April|May|June|July|August|September|October|November"
          "|December")
FORBIDDEN = {
    "a path outside the repository": re.compile(r"\.\./shared|\bshared/seeds|\bseeds/"),
    "DESIGN.md": re.compile(r"DESIGN\.md"),
    "a date it held until": re.compile(rf"\buntil\s+({MONTHS})\b", re.I),
    "a session": re.compile(r"\bsessions?\b", re.I),
}
# Only the files the benchmark scripts write carry dates.
DATED = [README, *DOCS, ROOT / "bench" / "README.md"]
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")

PYTHON = re.compile(r"```python\n(.*?)```", re.S)
PRINTS = re.compile(r"\s*prints\s*\n+```text\n(.*?)```", re.S)
CONSOLE = re.compile(r"```console\n(.*?)```", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_readme_is_short():
    assert README.stat().st_size <= 20 * 1024


@pytest.mark.parametrize("path", PROSE, ids=_name)
def test_no_history_and_nothing_outside_the_repository(path):
    text = path.read_text("utf-8")
    found = [f"{what}: {m.group(0)!r}" for what, pattern in FORBIDDEN.items()
             for m in pattern.finditer(text)]
    if path in DATED:
        found += [f"a date: {m.group(0)!r}" for m in DATE.finditer(text)]
    assert not found, f"{_name(path)}: " + "; ".join(found)


@pytest.mark.parametrize("path", LINKED, ids=_name)
def test_relative_links_point_at_files_that_exist(path):
    text = re.sub(r"```.*?```", "", path.read_text("utf-8"), flags=re.S)
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]
    missing = [t for t in targets if not (path.parent / t.split("#")[0]).exists()]
    assert not missing, f"{_name(path)} links to missing files: {missing}"
    for target in (t for t in targets if "#" in t):
        page, anchor = target.split("#", 1)
        headings = (path.parent / page if page else path).read_text("utf-8")
        slugs = {_slug(h) for h in re.findall(r"^#+ (.*)$", headings, re.M)}
        assert anchor in slugs, f"{_name(path)} links to a missing heading: {target}"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _blocks(path: Path) -> list[tuple[str, str | None]]:
    """Each ```python block of a file, and the output a ``prints`` block after it shows."""
    text = path.read_text("utf-8")
    out = []
    for m in PYTHON.finditer(text):
        shown = PRINTS.match(text, m.end())
        out.append((m.group(1), shown.group(1) if shown else None))
    return out


EXAMPLES = [(path, i) for path in (README, *DOCS) for i in range(len(_blocks(path)))]


@pytest.mark.parametrize(("path", "index"), EXAMPLES,
                         ids=[f"{_name(p)}-{i}" for p, i in EXAMPLES])
def test_python_examples_run_and_print_what_they_show(monkeypatch, path, index):
    code, shown = _blocks(path)[index]
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, _name(path), "exec"), {"__name__": "__docs__"})
    if shown is not None:
        assert out.getvalue() == shown


def test_every_docs_page_with_code_shows_what_it_prints():
    for path in DOCS:
        for code, shown in _blocks(path):
            assert shown is not None or "print(" not in code, (_name(path), code[:60])


COMMANDS = [(path, i) for path in DOCS for i in range(len(CONSOLE.findall(path.read_text())))]


@pytest.mark.parametrize(("path", "index"), COMMANDS,
                         ids=[f"{_name(p)}-{i}" for p, i in COMMANDS])
def test_command_line_examples_print_what_they_show(path, index):
    block = CONSOLE.findall(path.read_text("utf-8"))[index]
    runs = re.split(r"^\$ ", block, flags=re.M)[1:]
    assert runs, "a console block starts with a command"
    for run in runs:
        command, *expected = run.rstrip("\n").split("\n")
        args = re.findall(r'"[^"]*"|\S+', command)
        assert args[0] == "engine"
        argv = [a.strip('"') for a in args[1:]]
        done = subprocess.run([sys.executable, "-m", "engine", *argv], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        assert done.stdout.splitlines() == expected, command


def test_the_api_page_names_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text("utf-8")
    missing = [n for n in engine.__all__ if not re.search(rf"`{re.escape(n)}[`(]", text)]
    assert not missing, f"docs/api.md leaves out {missing}"


def test_the_rules_page_ruleset_loads():
    text = (ROOT / "docs" / "rules.md").read_text("utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[races." in b)
    path = Path(tempfile.mkdtemp()) / "village.toml"
    path.write_text(block, "utf-8")
    rules = engine.load_rules(path)
    squires = rules.unit("squires")
    assert squires.troop == "cavalry" and squires.multipliers["thorns"] == float("inf")
    assert rules.terrain["footbridge"].passage and rules.terrain["path"].closed_to == ("cavalry",)
    assert rules.manoeuvres == {"reform": 3.0, "face": 4.0, "frontage": 2.0,
                                "frontage_figures": 2.0}
