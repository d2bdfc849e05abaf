"""The modules of simulations import each other without a cycle, counting the imports
inside functions too (a deferred import hides a cycle from Python, not from a reader)."""

import ast
import importlib
import pkgutil
from pathlib import Path

import simulations as package

PACKAGE = package.__name__


def module_names() -> list[str]:
    return sorted(f"{PACKAGE}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
                  if info.name != "migrations")


def imported_siblings(module_name: str, known: set[str]) -> set[str]:
    """Modules of the package that `module_name` imports anywhere in its source."""
    source = Path(importlib.import_module(module_name).__file__).read_text()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative to this package
                base = f"{PACKAGE}.{base}".rstrip(".")
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in found if name in known and name != module_name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    visiting, done = [], set()

    def visit(node: str) -> list[str] | None:
        if node in visiting:
            return visiting[visiting.index(node):] + [node]
        if node in done:
            return None
        visiting.append(node)
        for target in sorted(graph[node]):
            if cycle := visit(target):
                return cycle
        visiting.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        if cycle := visit(start):
            return cycle
    return None


def test_every_module_imports():
    names = module_names()
    assert {f"{PACKAGE}.points", f"{PACKAGE}.tasks", f"{PACKAGE}.watchdog"} <= set(names)
    for name in names:
        importlib.import_module(name)


def test_the_import_graph_has_no_cycle():
    known = set(module_names())
    graph = {name: imported_siblings(name, known) for name in known}
    assert f"{PACKAGE}.points" in graph[f"{PACKAGE}.tasks"]  # the graph is really read
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
