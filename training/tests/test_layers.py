"""The package's layers (training/README.md, "Package layers"): a module imports modules of its own
layer and those below, at the top of the file, and the imports between modules form no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pskills_train"

# Lowest first. A module is in the row of the longest prefix of its dotted name.
LAYERS: list[tuple[str, ...]] = [
    ("__init__", "config_io", "data.config", "tokenizer", "export.data_sets"),  # data_sets: the card's plain record
    ("model", "distill.objective"),  # the distillation loss is plain torch; train_step.onnx exports it
    ("data", "synth", "skillworld"),
    ("train",),
    ("export",),
    ("hyper",),
    ("evals", "evals.metrics", "evals.tasks", "evals.adapters", "evals.score", "evals.conditions",
     "evals.report", "evals.diversity", "evals.retrieval"),
    ("distill",),
    ("evals.distilled", "evals.leaks", "evals.use", "evals.core", "evals.merging", "evals.run", "evals.sw_suite",
     "evals.cli", "evals.__main__"),
    ("distill.meta", "distill.__main__", "export.from_hf"),  # commands that put the layers below together
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


def layer(name: str) -> int:
    rows = [(len(p), i) for i, row in enumerate(LAYERS) for p in row if name == p or name.startswith(p + ".")]
    assert rows, f"{name}: in no row of LAYERS"
    return max(rows)[1]


def test_imports_of_the_package_sit_at_the_top():
    local = sorted((m, d) for m, deps in graph().items() for d, at_top in deps.items()
                   if not at_top and (m, d) not in LOCAL_OK)
    assert not local, f"imports inside a function (break a cycle by moving the shared part lower): {local}"


def test_no_module_imports_a_higher_layer():
    up = sorted((m, d) for m, deps in graph().items() for d in deps if layer(d) > layer(m))
    assert not up, f"imports of a higher layer (LAYERS): {up}"


def test_the_imports_form_no_cycle():
    g = graph()
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        for d in g.get(m, {}):
            assert d not in path, f"import cycle: {' -> '.join(path[path.index(d):] + [d])}"
            if d not in done:
                visit(d, path + [d])
        done.add(m)

    for m in sorted(g):
        visit(m, [m])
