"""The tree's rules, read from the import statements (docs/architecture.md):

- the core app `benchmarks` never imports a feature app (it reaches them through
  benchmarks/hooks.py, search sources and signals that the features fill in ready());
- the apps' imports form no cycle;
- the pure libraries (simulator, schedtrace, the parsers) import no Django and nothing of the
  project but each other and the one input-error type;
- no app imports the `portal` project package (the project mounts the apps, not the reverse).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = "benchmarks"
FEATURES = ("simulations", "discussions", "regressions", "traces", "bisection")
APPS = (CORE, *FEATURES)
PURE_LIBRARIES = ("simulator", "schedtrace", "benchmarks/parsers")
# What a pure library may import of the project: the pure libraries and the one error type.
PURE_MODULES = ("simulator", "schedtrace", "benchmarks.parsers", "benchmarks.errors")
PROJECT_PACKAGES = (*APPS, "simulator", "schedtrace", "portal")


def _python_files(folder: str, root: Path = ROOT):
    return sorted(p for p in (root / folder).rglob("*.py") if "migrations" not in p.parts)


def _imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones resolved."""
    package = path.relative_to(root).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join((*base, node.module) if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
    return found


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def app_imports(root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """app -> imported app -> ["file:line", ...]."""
    graph: dict[str, dict[str, list[str]]] = {app: {} for app in APPS}
    for app in APPS:
        for path in _python_files(app, root):
            for line, module in _imported_modules(path, root):
                target = _top(module)
                if target in APPS and target != app:
                    where = f"{path.relative_to(root)}:{line}"
                    graph[app].setdefault(target, []).append(where)
    return graph


def test_the_core_imports_no_feature():
    reached = app_imports()[CORE]
    assert not reached, f"the core imports feature apps: {reached}"


def _cycle(graph: dict[str, dict]) -> list[str] | None:
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for nxt in graph.get(node, {}):
            if state.get(nxt) == "open":
                return [*path, node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = "done"
        return None

    for node in graph:
        if node not in state and (found := visit(node, [])):
            return found
    return None


def test_the_apps_import_each_other_without_a_cycle():
    graph = app_imports()
    assert _cycle(graph) is None, f"import cycle between apps: {' -> '.join(_cycle(graph))}"


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": []}, "b": {}, "c": {"a": []}}) is None


@pytest.mark.parametrize("library", PURE_LIBRARIES)
def test_pure_libraries_import_no_django_and_no_app(library):
    offending = []
    for path in _python_files(library):
        for line, module in _imported_modules(path):
            target = _top(module)
            pure = any(module == m or module.startswith(m + ".") for m in PURE_MODULES)
            if target in ("django", "rest_framework", "celery") or (
                    target in PROJECT_PACKAGES and not pure):
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not offending, offending


def test_only_the_project_imports_portal():
    offending = [f"{path.relative_to(ROOT)}:{line}"
                 for app in (*APPS, "simulator", "schedtrace") for path in _python_files(app)
                 for line, module in _imported_modules(path) if _top(module) == "portal"]
    assert not offending, f"apps import the project package: {offending}"


def test_the_reader_sees_core_imports_of_features_in_every_form(tmp_path):
    """The check itself, on a planted tree: absolute, dotted and relative imports all count."""
    (tmp_path / CORE / "api").mkdir(parents=True)
    (tmp_path / CORE / "a.py").write_text("from simulations.selectors import job_for_run\n")
    (tmp_path / CORE / "b.py").write_text("import traces.models\n")
    (tmp_path / CORE / "api" / "c.py").write_text("from ..hooks import x\nfrom . import d\n")
    (tmp_path / "regressions").mkdir()
    (tmp_path / "regressions" / "d.py").write_text("from .models import Regression\n")
    graph = app_imports(tmp_path)
    assert graph[CORE] == {"simulations": ["benchmarks/a.py:1"], "traces": ["benchmarks/b.py:1"]}
    assert graph["regressions"] == {}
