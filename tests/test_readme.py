"""The README's Python examples run as written, and its CLI example prints what it shows."""

import re
import subprocess
import sys

from .conftest import ROOT

README = (ROOT / "README.md").read_text("utf-8")


def test_python_examples_run(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "reachable" in out and "bridge" in out


def test_cli_example_prints_what_the_readme_shows():
    shown = README.split("$ engine route ")[1].split("```")[0]
    command, *expected = shown.strip("\n").split("\n")
    out = subprocess.run(
        [sys.executable, "-m", "engine", "route", *command.split()],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    assert out.splitlines() == expected
