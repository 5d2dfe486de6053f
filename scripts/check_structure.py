"""Check the structure CI relies on: layers, no import cycles, other libraries' private names.

- Layers: app -> lsp_server -> decoder -> polish. Each imports only those below it: polish
  none of ours, decoder never the server, and nothing the application (CLI, benchmarks).
- No import cycle between our modules, counting every import: module level, inside functions,
  and under `if TYPE_CHECKING:` (a cycle hidden there is still a cycle for a reader).
- Another library's private names (`_name`, not dunder) appear only in the compatibility
  modules (decoder/compat/, lsp_server/compat.py, and the test that checks them). A private
  name counts as ours when our own code defines it somewhere (a function, class, variable,
  attribute or parameter), except through `super()`, which reaches a library's base class.

Exit status 1 with one line per finding, 0 when clean.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "lsp_server", "decoder", "polish")  # from the top layer down
CHECKED = (*PACKAGES, "tests", "scripts")
COMPAT = ("decoder/compat/", "lsp_server/compat.py", "tests/test_compat.py")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources() -> dict[str, tuple[Path, ast.Module]]:
    found = {}
    for top in CHECKED:
        for path in sorted((ROOT / top).rglob("*.py")):
            found[module_name(path)] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return found


def imported(module: str, path: Path, tree: ast.Module, known: set[str]) -> set[str]:
    """Our modules that `module` imports anywhere in its body."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if candidate in known else base)
    return {name for name in out if name in known and name != module}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    rank = {name: i for i, name in enumerate(PACKAGES)}
    out = []
    for module, targets in sorted(graph.items()):
        top = module.split(".")[0]
        for target in sorted(targets):
            other = target.split(".")[0]
            if top in rank and other in rank and rank[other] < rank[top]:
                out.append(f"layers: {module} imports {target} ({top} may not import {other})")
    return out


def own_private_names(trees: list[ast.Module]) -> set[str]:
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
    return {n for n in names if n.startswith("_")}


# namedtuple's public methods carry an underscore only to stay clear of field names.
NAMEDTUPLE_API = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
# Documented standard-library functions with an underscore (os._exit: exit without cleanup).
STDLIB_API = frozenset({"_exit"})


def is_private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in NAMEDTUPLE_API | STDLIB_API


def is_super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def private_uses(path: Path, tree: ast.Module, ours: set[str], known: set[str]) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    if rel.startswith(COMPAT):
        return []
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] not in known:
                names = [a.name for a in node.names if is_private(a.name)]
                names += [p for p in node.module.split(".") if is_private(p)]
        elif isinstance(node, ast.Import):
            names = [p for a in node.names for p in a.name.split(".") if is_private(p)]
            names = [n for n in names if n.split(".")[0] not in known]
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            # super()._name reaches into a library's base class even when we override _name.
            if node.attr not in ours or is_super_call(node.value):
                names = [node.attr]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and is_private(node.args[1].value)
            and node.args[1].value not in ours
        ):
            names = [node.args[1].value]
        out += [
            f"private: {rel}:{node.lineno} uses {name} outside the compat modules" for name in names
        ]
    return out


def main() -> int:
    found = sources()
    known = set(found) | {m.split(".")[0] for m in found}
    graph = {m: imported(m, path, tree, set(found)) for m, (path, tree) in found.items()}
    problems = layer_violations(graph)
    problems += [f"cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    ours = own_private_names([tree for _, tree in found.values()])
    for path, tree in found.values():
        problems += private_uses(path, tree, ours, known)
    for line in problems:
        print(line)
    print(f"check_structure: {len(found)} modules, {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
