"""The house's shape: short functions and modules of a readable size (in the package,
its tests and its benchmarks), and imports that flow one way (map -> rules ->
terrain -> search -> answers -> output), without circles."""

import ast
from pathlib import Path

import pytest

import engine

PACKAGE = Path(engine.__file__).resolve().parent
ROOT = Path(__file__).resolve().parent.parent  # the checkout: tests/ and bench/
MAX_FUNCTION = 150
MAX_MODULE = 900

# Each module's floor: a module imports only from its own floor or lower ones.
FLOORS = {
    "errors": 0, "_version": 0, "_args": 0, "_limits": 0, "_intrinsics": 0, "_cache": 0,
    "_threads": 0, "grid": 0,
    "rules": 1,
    "maps": 2,
    "terrain": 3,
    "search": 4,
    "ai": 5,
    "answers": 6, "render": 6, "warmup": 6, "_coldstart": 6,
    "serve": 7, "batch": 7,
    "cli": 8, "__main__": 8, "": 8,
}


def _modules() -> dict[str, Path]:
    """Dotted names under the package ('' for the package itself) -> their files."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _floor(name: str) -> int:
    return FLOORS[name.split(".")[0]]


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Line numbers of imports made only for type checkers."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in ast.walk(node):
                lines.add(getattr(inner, "lineno", -1))
    return lines


def _imports(name: str) -> set[str]:
    """The package's modules that ``name`` imports at run time (at module level or
    inside functions)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text("utf-8"))
    skip = _type_checking_only(tree)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    if name == "":
        package = []
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("engine.") and node.lineno not in skip:
                    out.add(a.name.removeprefix("engine."))
        if not isinstance(node, ast.ImportFrom) or node.lineno in skip:
            continue
        if node.level == 0:
            if node.module == "engine" or (node.module or "").startswith("engine."):
                base = (node.module or "").removeprefix("engine").lstrip(".").split(".")
            else:
                continue
        else:
            base = package[: len(package) - node.level + 1] + (node.module.split(".")
                                                                if node.module else [])
        base_name = ".".join(p for p in base if p)
        for alias in node.names:
            sub = f"{base_name}.{alias.name}".lstrip(".")
            out.add(sub if sub in MODULES else base_name)
    out.discard(name)
    return out


def _sources() -> dict[str, Path]:
    """Every Python file of the package, its tests and its benchmarks, by a name to show."""
    out = {f"engine/{p.relative_to(PACKAGE)}": p for p in MODULES.values()}
    for folder in ("tests", "bench"):
        out.update({str(p.relative_to(ROOT)): p for p in sorted((ROOT / folder).rglob("*.py"))})
    return out


def test_no_function_is_longer_than_the_house_allows():
    long = []
    for name, path in _sources().items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION:
                    long.append(f"{name}:{node.lineno} {node.name} ({length})")
    assert not long, "functions over 150 lines: " + ", ".join(long)


def test_no_module_is_longer_than_the_house_allows():
    sources = _sources()
    assert any(n.startswith("tests/") for n in sources) and any(n.startswith("bench/")
                                                                for n in sources)
    long = [f"{name} ({n})" for name, p in sources.items()
            if (n := p.read_text("utf-8").count("\n")) > MAX_MODULE]
    assert not long, "modules over 900 lines: " + ", ".join(long)


def test_every_module_has_a_floor():
    assert not [n for n in MODULES if n.split(".")[0] not in FLOORS]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_never_reach_a_higher_floor(name):
    up = sorted(m for m in _imports(name) if _floor(m) > _floor(name))
    assert not up, f"engine.{name} (floor {_floor(name)}) imports higher floors: {up}"


def test_imports_have_no_circles():
    graph = {n: _imports(n) for n in MODULES}
    # A package's __init__ imports its own modules; they may import their siblings
    # through it only if no circle closes (checked below like any other edge).
    state: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                circles.append([*stack[stack.index(m):], m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_the_walker_sees_the_imports_it_checks():
    # Module-level, relative-to-a-subpackage and function-level imports are all seen.
    assert {"terrain.costgrid", "search._kernels"} <= _imports("search.front")
    assert {"maps.geojson", "answers", "serve"} <= _imports("cli")
    assert {"search.flow", "ai.threat"} <= _imports("answers")
    assert "search.raw" not in _imports("search._state")  # for type checkers only
