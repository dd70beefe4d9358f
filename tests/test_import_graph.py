"""Each package's import graph points one way: no cycles, and the framework's layers only import downwards.

The graph is read from the source with `ast` (nothing is imported, so this runs in the `repo`
session without the packages installed). Every import counts wherever it is written, at module
level or inside a function: a function-local import that dodges a cycle at start-up still ties the
two modules together, and the cycle comes back the day someone moves it up. A string naming a
module in full (``importlib.import_module("paddlectl.cli.export")``, a lazy command table) counts
too, and so does ``import_module(f"{__package__}.linalg")``; an installer's
``import_module(f"{ops.__name__}.{info.name}")`` reaches every module of that package. Only imports
under ``if TYPE_CHECKING:`` are left out, since they never run.

``from a.b import c`` names the submodule ``a.b.c`` when there is one and ``a.b``'s ``__init__``
otherwise. For cycles, importing ``a.b.c`` also runs ``a/b/__init__.py`` first, so the packages on
the way are edges as well: a low module importing ``utils.fileio`` runs ``utils/__init__``. The
layer check reads only the modules an import statement names.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE_ROOTS = sorted(
    p.parent
    for p in [*ROOT.glob("packages/*/src/paddlectl/*/__init__.py"), *ROOT.glob("tools/*/src/paddlectl/*/__init__.py")]
)
FRAMEWORK = "paddlectl.framework"

# The framework's layers, lowest first: a module may import modules of its own layer and of those
# below it. A layer is a set of names (a subpackage, a module, or a module inside a subpackage: the
# longest matching name decides, so the low-level `utils.fileio` and the `paddle.utils` namespace
# that runs the whole framework sit in different layers). docs/architecture.md ("Import layers")
# says why each sits where it does.
FRAMEWORK_LAYERS: list[set[str]] = [
    {"errors", "_blas_env", "device"},
    {"utils.fileio", "config", "modes", "namespaces"},
    {"core", "dtype_info"},
    {"kernels"},
    {"ops"},
    {"compiler"},
    {"optimizer", "linalg", "fft", "signal", "serialization", "distribution", "autograd"},
    {"nn", "io", "metric", "amp", "flags", "sparse"},
    {"distributed"},
    {"static"},
    {"onnx.export", "onnx.emitters", "onnx.fft_emitters", "onnx.dependency"},
    {"jit"},
    {"onnx"},
    {"inference"},
    {"hapi"},
    {"vision", "text", "audio", "utils", "testing"},
]

# Cycles and upward imports still being removed for issue 21, each named with who owns the fix. The
# test fails on any cycle or upward import not listed here, and on an entry that no longer occurs:
# delete entries as their fixes land, so the lists only shrink.
KNOWN_CYCLES: dict[frozenset[str], str] = {}
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> source file, for one package (root is its ``src/paddlectl/<name>``)."""
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, at any depth, except those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _from_source(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` statement reads from."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: dict[str, Path]):
    """The modules of this package that one import statement makes ``module`` import."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in known:
                yield alias.name
        return
    source = _from_source(module, is_package, node)
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        if submodule in known:
            yield submodule
        elif source in known:
            yield source


def _named_modules(tree: ast.AST, known: dict[str, Path]):
    """Modules named in full by a string (``importlib.import_module("a.b")``, a lazy command table)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            yield node.value


def _computed_modules(module: str, is_package: bool, tree: ast.AST, known: dict[str, Path]):
    """``import_module(f"{__package__}.linalg")`` reaches that module, and an installer's
    ``import_module(f"{ops.__name__}.{info.name}")`` every module directly in that package."""
    bound = {}  # names this file binds to modules of the package
    for node in _imports(tree):
        for alias in node.names:
            if isinstance(node, ast.Import):
                target = alias.name if alias.asname or "." not in alias.name else ""  # ``import a.b`` binds ``a``
            else:
                target = f"{_from_source(module, is_package, node)}.{alias.name}"
            if target in known:
                bound[alias.asname or alias.name.partition(".")[0]] = target
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.JoinedStr)):
            continue
        if getattr(node.func, "attr", getattr(node.func, "id", None)) != "import_module":
            continue
        head, *rest = node.args[0].values
        value = getattr(head, "value", None)
        if isinstance(value, ast.Name) and value.id == "__package__":
            base = package
        elif (
            isinstance(value, ast.Attribute) and value.attr == "__name__" and getattr(value.value, "id", None) in bound
        ):
            base = bound[value.value.id]
        else:
            continue
        if all(isinstance(part, ast.Constant) for part in rest):
            name = base + "".join(part.value for part in rest)
            if name in known:
                yield name
        else:
            yield from (m for m in known if m.rpartition(".")[0] == base and m != module)


def _with_packages(module: str, targets: set[str], top: str, known: dict[str, Path]) -> set[str]:
    """Add the packages whose ``__init__`` Python runs on the way to each target: importing ``a.b.c``
    runs ``a/b/__init__.py`` first. The package's own top and the importer's ancestors are left out
    (they are already being imported when the importer runs)."""
    found = set(targets)
    for target in targets:
        parts = target.split(".")
        for end in range(top.count(".") + 2, len(parts)):
            package = ".".join(parts[:end])
            if package in known and not (module + ".").startswith(package + "."):
                found.add(package)
    return found


@cache
def explicit_imports(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package its import statements name (self-imports dropped)."""
    known = _modules(root)
    graph = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        targets = {t for node in _imports(tree) for t in _targets(module, is_package, node, known)}
        targets |= {*_named_modules(tree, known), *_computed_modules(module, is_package, tree, known)}
        graph[module] = targets - {module}
    return graph


@cache
def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> every module of the same package that importing it runs first (packages included)."""
    known = _modules(root)
    top = _module_name(root / "__init__.py", root)
    return {m: _with_packages(m, targets, top, known) - {m} for m, targets in explicit_imports(root).items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module, iteratively (the graph may be deep)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest cycle through the component's first module, to print (breadth-first search)."""
    members, start = set(component), component[0]
    parents = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    path = [node]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if succ not in parents:
                    parents[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def _short(name: str, root: Path) -> str:
    package = _module_name(root / "__init__.py", root)
    return name.removeprefix(package).removeprefix(".") or "__init__"


def _cycles(root: Path) -> dict[frozenset[str], str]:
    graph = import_graph(root)
    return {
        frozenset(_short(m, root) for m in component): " -> ".join(
            _short(m, root) for m in shortest_cycle(graph, component)
        )
        for component in strongly_connected(graph)
    }


@pytest.mark.parametrize("root", SOURCE_ROOTS, ids=lambda p: p.name)
def test_no_import_cycle(root):
    cycles = _cycles(root)
    new = [
        f"{', '.join(sorted(c))}\n    e.g. {path}"
        for c, path in cycles.items()
        if c not in KNOWN_CYCLES or root.name != "framework"
    ]
    assert not new, f"import cycles in {root.name} (function-local imports count):\n  " + "\n  ".join(new)


def package_graph() -> dict[str, set[str]]:
    """Package (``framework``, ``cli``, ...) -> the other packages of the monorepo it imports."""
    names = {root.name for root in SOURCE_ROOTS}
    graph = {name: set() for name in names}
    for root in SOURCE_ROOTS:
        for path in _modules(root).values():
            for node in _imports(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.level:
                    continue
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for parts in (m.split(".") for m in modules):
                    if parts[0] == "paddlectl" and len(parts) > 1 and parts[1] in names - {root.name}:
                        graph[root.name].add(parts[1])
    return graph


def test_no_cycle_between_packages():
    """Suites and tools import the framework, the CLI reaches them through entry points: no package
    imports one that imports it back."""
    cycles = strongly_connected(package_graph())
    assert not cycles, f"packages that import each other: {cycles}"


def test_known_cycles_still_exist():
    """An allow-list entry whose cycle is gone must go, so the list only ever shrinks."""
    framework = next(r for r in SOURCE_ROOTS if r.name == "framework")
    gone = sorted(", ".join(sorted(c)) for c in KNOWN_CYCLES if c not in _cycles(framework))
    assert not gone, "fixed, delete from KNOWN_CYCLES: " + "; ".join(gone)


def _layer(module: str) -> int | None:
    """The rank of the longest name in FRAMEWORK_LAYERS that is ``module`` or a package above it."""
    parts = module.removeprefix(FRAMEWORK + ".").split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        for rank, layer in enumerate(FRAMEWORK_LAYERS):
            if name in layer:
                return rank
    return None


def test_every_framework_module_has_a_layer():
    framework = next(r for r in SOURCE_ROOTS if r.name == "framework")
    missing = sorted(m for m in _modules(framework) if m != FRAMEWORK and _layer(m) is None)
    assert not missing, f"add these to FRAMEWORK_LAYERS (and docs/architecture.md): {missing}"


def test_framework_imports_point_down_the_layers():
    framework = next(r for r in SOURCE_ROOTS if r.name == "framework")
    upward = set()
    for module, targets in explicit_imports(framework).items():
        if module == FRAMEWORK:  # the public API re-exports every layer
            continue
        for target in targets:
            if target == FRAMEWORK or (_layer(target) or 0) > (_layer(module) or len(FRAMEWORK_LAYERS)):
                upward.add((_short(module, framework), _short(target, framework)))
    new = sorted(f"{a} -> {b}" for a, b in upward - set(KNOWN_UPWARD))
    assert not new, "imports against FRAMEWORK_LAYERS (lowest first):\n  " + "\n  ".join(new)
    gone = sorted(f"{a} -> {b}" for a, b in set(KNOWN_UPWARD) - upward)
    assert not gone, "fixed, delete from KNOWN_UPWARD: " + "; ".join(gone)


def test_the_graph_counts_local_imports_packages_and_submodules(tmp_path):
    """The checks above can fail: a cycle closed only by a function-local import and a package's
    ``__init__`` is found, computed ``import_module`` names are edges, a TYPE_CHECKING import is not."""
    root = tmp_path / "src" / "paddlectl" / "fake"
    files = {
        "__init__.py": "",
        "a.py": "def f():\n    from . import b\n",
        "b.py": "from .sub.leaf import x\n",
        "sub/__init__.py": "from ..a import f\n",
        "sub/leaf.py": "x = 1\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
        "d.py": "import importlib\n\ndef f():\n    return importlib.import_module(f'{__package__}.sub.leaf')\n",
        "e.py": "import importlib\nfrom . import sub as s\n\nfor n in 'x':\n    importlib.import_module(f'{s.__name__}.{n}')\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert explicit_imports(root)["paddlectl.fake.b"] == {"paddlectl.fake.sub.leaf"}
    assert explicit_imports(root)["paddlectl.fake.c"] == set()
    assert explicit_imports(root)["paddlectl.fake.d"] == {"paddlectl.fake.sub.leaf"}
    assert explicit_imports(root)["paddlectl.fake.e"] == {"paddlectl.fake.sub", "paddlectl.fake.sub.leaf"}
    assert _cycles(root) == {frozenset({"a", "b", "sub"}): "a -> b -> sub -> a"}
