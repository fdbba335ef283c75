"""The package layers as an import contract (issue 19 item 1; docs/architecture.md).

``meld8_env`` (engine, faces, agent contract, seat protocol) <- ``agents`` (bots, checkpoint policies)
<- ``training`` (trainers, tournaments) <- ``meld8_app`` (CLI, web table): each package imports only the
ones below it. Checked three ways:

- at run time: in a fresh interpreter a meta-path finder makes the upper packages unimportable (it
  raises), and every module of the lower package is imported - module-level imports and anything run
  at import time;
- statically: every ``import`` statement anywhere in a package's files (inside functions too) names
  only packages it may import, and none imports a private name (``_x``) of another package;
- no import cycle between files (the import graph of all four packages, built with ``ast``, has no
  strongly connected component of two or more files).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("meld8_env", "agents", "training", "meld8_app")
MAY_IMPORT = {
    "meld8_env": set(),
    "agents": {"meld8_env"},
    "training": {"meld8_env", "agents"},
    "meld8_app": {"meld8_env", "agents", "training"},
}
"""Package -> the project packages it may import (besides itself)."""

# Run in a fresh interpreter, for each stage (package, blocked packages) in order: block those packages,
# import every module of the package. Stages go from the bottom layer up, so each module is first
# imported under the strictest block that applies to it. A module whose *third-party* dependency is
# missing (ray, pettingzoo, ...) is reported as skipped; a blocked package reached in any way is a
# violation.
_PROBE = r"""
import importlib, json, pkgutil, sys
from pathlib import Path

root, stages = Path(sys.argv[1]), json.loads(sys.argv[2])
blocked = set()

class LayerViolation(ImportError):
    pass

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise LayerViolation(f"import of {name!r}")
        return None

sys.meta_path.insert(0, Block())
sys.path.insert(0, str(root))
report = {}
for package, block in stages:
    blocked.clear()
    blocked.update(block)
    names = [package] + sorted(m.name for m in pkgutil.walk_packages([str(root / package)], prefix=package + "."))
    out = {"imported": [], "skipped": {}, "violations": {}}
    for name in names:
        try:
            importlib.import_module(name)
        except LayerViolation as exc:
            out["violations"][name] = str(exc)
        except ImportError as exc:
            cause = exc
            while cause is not None and not isinstance(cause, LayerViolation):
                cause = cause.__cause__ or cause.__context__
            if cause is not None:
                out["violations"][name] = str(cause)
            else:
                out["skipped"][name] = str(exc)
        else:
            out["imported"].append(name)
    out["loaded_blocked"] = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
    report[package] = out
print(json.dumps(report))
"""
STAGES = [("meld8_env", ["agents", "training", "meld8_app"]), ("agents", ["training", "meld8_app"])]


def probe(stages: list, root: Path = ROOT) -> dict:
    """For each (package, blocked) stage: import every module of ``package`` under ``root`` with the
    ``blocked`` packages unimportable; returns package -> imported / skipped / violations."""
    env = {**os.environ, "PYTHONPATH": str(root), "MELD8_NO_REGISTER": "0"}
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, str(root), json.dumps(stages)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=root,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_statements(root: Path = ROOT):
    """(module, file, line, imported module, imported names) for every import statement of the four
    packages, at any depth (module level, functions, methods, ``try`` blocks)."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            mod = module_name(path, root)
            is_pkg = path.name == "__init__.py"
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        yield mod, path, node.lineno, a.name, []
                elif isinstance(node, ast.ImportFrom):
                    if node.level:  # relative: resolve against this module's package
                        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                        base = base[: len(base) - node.level + 1]
                        target = ".".join(base + ([node.module] if node.module else []))
                    else:
                        target = node.module or ""
                    yield mod, path, node.lineno, target, [a.name for a in node.names]


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """File -> files it imports (``from pkg import sub`` counts as importing ``pkg.sub`` when ``sub`` is
    a module, else ``pkg`` itself); only files of the four packages."""
    files = {module_name(p, root) for pkg in PACKAGES for p in (root / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, _, _, target, names in import_statements(root):
        subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in files]
        hits = subs + ([target] if target in files and len(subs) < max(len(names), 1) else [])
        graph[mod].update(h for h in hits if h != mod)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more files (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def upward_imports(root: Path = ROOT) -> list[str]:
    """Import statements that point up (or sideways out of) the layers, as 'file:line -> module'."""
    bad = []
    for mod, path, line, target, _ in import_statements(root):
        top, mine = target.split(".")[0], mod.split(".")[0]
        if top in PACKAGES and top != mine and top not in MAY_IMPORT[mine]:
            bad.append(f"{path.relative_to(root)}:{line} -> {target}")
    return bad


def test_every_module_imports_with_the_upper_layers_unimportable():
    report = probe(STAGES)
    for package, blocked in STAGES:
        out = report[package]
        assert out["violations"] == {}, f"{package} reaches {blocked}: {out['violations']}"
        assert out["loaded_blocked"] == []
        # the probe really imported the package (third-party extras may be missing: only those are skipped)
        assert len(out["imported"]) >= (25 if package == "meld8_env" else 5), out
        for name, why in out["skipped"].items():
            assert not any(b in why for b in blocked), (name, why)


def test_no_import_statement_points_up_the_layers():
    assert upward_imports() == []


def test_no_private_names_imported_across_packages():
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {n} from {target}"
        for mod, path, line, target, names in import_statements()
        if target.split(".")[0] in PACKAGES and target.split(".")[0] != mod.split(".")[0]
        for n in names
        if n.startswith("_") and not n.startswith("__")
    ]
    assert bad == []


def test_no_import_cycles_between_files():
    graph = import_graph()
    assert len(graph) > 60 and sum(map(len, graph.values())) > 150  # the graph is really built
    assert cycles(graph) == []


@pytest.mark.slow
def test_the_checks_catch_an_injected_upward_import_and_cycle(tmp_path):
    """In a scratch copy: one function-level ``meld8_env -> agents`` import fails the static check; one
    module-level one fails the run-time probe too; a two-file cycle is found."""
    scratch = tmp_path / "tree"
    for pkg in PACKAGES:
        src = ROOT / pkg
        for path in src.rglob("*.py"):
            dest = scratch / path.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(path.read_text())
    for so in (ROOT / "meld8_env").rglob("*.so"):  # the built C extensions, so the copy imports
        dest = scratch / so.relative_to(ROOT)
        dest.write_bytes(so.read_bytes())
    assert upward_imports(scratch) == [] and cycles(import_graph(scratch)) == []
    simulate = scratch / "meld8_env" / "simulate.py"
    simulate.write_text(simulate.read_text() + "\n\ndef _sneaky():\n    from agents.greedy import GreedyAgent\n")
    assert upward_imports(scratch) == ["meld8_env/simulate.py:" + _last_line(simulate) + " -> agents.greedy"]
    assert probe(STAGES[:1], scratch)["meld8_env"]["violations"] == {}  # function level: caught statically
    cards = scratch / "meld8_env" / "cards.py"
    cards.write_text(cards.read_text() + "\nimport agents.registry  # noqa\n")
    out = probe(STAGES[:1], scratch)["meld8_env"]
    assert "meld8_env.cards" in out["violations"] and "agents" in out["violations"]["meld8_env.cards"]
    greedy = scratch / "agents" / "greedy.py"  # defensive imports greedy; now greedy imports defensive
    greedy.write_text(greedy.read_text() + "\n\ndef _later():\n    from agents.defensive import DefensiveAgent\n")
    assert ["agents.defensive", "agents.greedy"] in cycles(import_graph(scratch))


def _last_line(path: Path) -> str:
    return str(len(path.read_text().splitlines()))
