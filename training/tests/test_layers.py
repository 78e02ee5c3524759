"""The package's layers (training/README.md, "Package layers"): a module imports modules of its own
layer and those below, at the top of the file; the imports between modules form no cycle, and neither do
the imports between the package's top-level parts (subpackages and top-level modules)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pskills_train"

# Lowest first; each entry is one top-level part of the package, so a subpackage sits in exactly one layer.
LAYERS: list[tuple[str, ...]] = [
    ("__init__", "distill_recipe", "tokenizer"),  # plain records: the distil recipe, BPE and the chat template
    ("model",),  # the base LM and the distillation objective (plain torch; train_step.onnx exports it)
    ("data", "synth", "skillworld", "config_io"),
    ("train", "scoring"),
    ("distill",),
    ("export",),
    ("hyper",),
    ("evals",),
    ("commands",),  # commands that put the layers below together
]
# Imports inside a function that stay there, (module, imported module): none of this package's own.
LOCAL_OK: set[tuple[str, str]] = set()


def module_files() -> dict[str, Path]:
    out = {}
    for p in sorted(SRC.rglob("*.py")):
        parts = p.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "__init__"] = p
    return out


def graph() -> dict[str, dict[str, bool]]:
    """module -> {module of this package it imports: whether at the top of the file}."""
    files = module_files()
    g: dict[str, dict[str, bool]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        package = [] if name == "__init__" else name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: dict[str, bool] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package[: len(package) - node.level + 1] + (node.module or "").split(".")
                elif (node.module or "").split(".")[0] == "pskills_train":
                    parts = (node.module or "").split(".")[1:]
                else:
                    continue
                mod = ".".join(p for p in parts if p) or "__init__"
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in files]  # `from . import x`
                targets = subs or [mod]
            elif isinstance(node, ast.Import):
                targets = [a.name.split(".", 1)[1] for a in node.names if a.name.startswith("pskills_train.")]
            else:
                continue
            for t in targets:
                deps[t] = deps.get(t, False) or id(node) in top
        g[name] = deps
    return g


def part(name: str) -> str:
    """The top-level part a module belongs to: its subpackage, or itself."""
    return name.split(".")[0]


def layer(name: str) -> int:
    rows = [i for i, row in enumerate(LAYERS) if part(name) in row]
    assert rows, f"{name}: in no row of LAYERS"
    return rows[0]


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph g (node -> nodes it imports), or None."""
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> list[str] | None:
        for d in sorted(g.get(m, ())):
            if d in path:
                return path[path.index(d):] + [d]
            if d not in done:
                found = visit(d, path + [d])
                if found:
                    return found
        done.add(m)
        return None

    for m in sorted(g):
        found = visit(m, [m])
        if found:
            return found
    return None


def test_every_part_of_the_package_sits_in_exactly_one_layer():
    listed = [p for row in LAYERS for p in row]
    assert all("." not in p for p in listed), "LAYERS names top-level parts, not modules inside them"
    twice = sorted({p for p in listed if listed.count(p) > 1})
    assert not twice, f"in more than one layer: {twice}"
    parts = {part(m) for m in module_files()}
    assert parts == set(listed), f"not in LAYERS: {sorted(parts - set(listed))}; gone: {sorted(set(listed) - parts)}"


def test_imports_of_the_package_sit_at_the_top():
    local = sorted((m, d) for m, deps in graph().items() for d, at_top in deps.items()
                   if not at_top and (m, d) not in LOCAL_OK)
    assert not local, f"imports inside a function (break a cycle by moving the shared part lower): {local}"


def test_no_module_imports_a_higher_layer():
    up = sorted((m, d) for m, deps in graph().items() for d in deps if layer(d) > layer(m))
    assert not up, f"imports of a higher layer (LAYERS): {up}"


def test_the_imports_form_no_cycle():
    found = cycle({m: set(deps) for m, deps in graph().items()})
    assert not found, f"import cycle: {' -> '.join(found)}"


def test_no_two_parts_of_the_package_import_each_other():
    """Modules may form no cycle and still tie two subpackages together (a.x -> b.y, b.z -> a.w):
    then neither can be read, tested or moved without the other."""
    g: dict[str, set[str]] = {}
    for m, deps in graph().items():
        g.setdefault(part(m), set()).update(part(d) for d in deps if part(d) != part(m))
    found = cycle(g)
    assert not found, f"subpackages that import each other: {' -> '.join(found)} (move the shared piece lower)"
