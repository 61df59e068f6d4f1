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


def test_home_made_ruleset_loads_and_prices(tmp_path):
    import engine

    block = re.findall(r"```toml\n(.*?)```", README, re.S)[0]
    path = tmp_path / "village.toml"
    path.write_text(block, "utf-8")
    rules = engine.load_rules(path)
    peasants = rules.unit("peasants")
    assert peasants.multipliers["mud"] == 3.0 and peasants.quanta == {"thorns": 2.0}
    assert peasants.multipliers["thicket"] == 10 / 3  # a quarter of 10 is 2.5, rounded to 3
    assert rules.unit("squires").troop == "cavalry"
    assert rules.unit("peasants", march=True).move == 20.0
    assert rules.manoeuvres["frontage_figures"] == 2
