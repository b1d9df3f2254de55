"""The grader's modules import one another without a circle (imports inside functions included)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograder"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, known: set[str]) -> set[str]:
    """The package's modules a module imports. `from autograder import x` imports the module
    autograder.x when there is one (not the package's __init__), else the name x of autograder."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = {f"{node.module}.{alias.name}" for alias in node.names} & known
            found |= modules if len(modules) == len(node.names) else {*modules, node.module}
    return found & known


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    known = set(paths)
    return {name: imported(ast.parse(path.read_text()), known) - {name} for name, path in paths.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that reach one another (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_it_finds_a_circle_when_there_is_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_it_reads_an_import_of_a_sibling_module_as_that_module_and_of_a_name_as_its_module():
    known = {"pkg", "pkg.a", "pkg.b", "pkg.c"}
    tree = ast.parse("from pkg import a, b\nfrom pkg.c import thing\nimport pkg.a\nfrom pkg import VERSION, a")
    assert imported(tree, known) == {"pkg.a", "pkg.b", "pkg.c", "pkg"}
    assert imported(ast.parse("from pkg import a, b"), known) == {"pkg.a", "pkg.b"}


def test_the_grader_has_no_import_circle():
    graph = import_graph()
    assert "autograder.roster.grade_all" in graph and "autograder.commands" in graph["autograder.cli"]
    assert circles(graph) == []
