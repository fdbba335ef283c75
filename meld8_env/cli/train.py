"""``meld8 train``: train a MaskablePPO agent (needs the train extra)."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys

HINT = "pip install torch==2.13.0 'meld8[train]' (CPU wheel first; see the README)"


def option_table() -> str:
    """Every TrainConfig option with its default and meaning, read from the source without importing it."""
    spec = importlib.util.find_spec("training.train_ppo")
    if spec is None or spec.origin is None:
        return ""
    tree = ast.parse(open(spec.origin).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TrainConfig")
    rows, body = [], cls.body
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            default = ast.unparse(node.value) if node.value is not None else ""
            if default.startswith("dataclasses.field(default_factory=lambda: "):
                default = default.removeprefix("dataclasses.field(default_factory=lambda: ").removesuffix(")")
            doc = ""
            nxt = body[i + 1] if i + 1 < len(body) else None
            if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
                doc = " ".join(str(nxt.value.value).split())
            rows.append(f"  {node.target.id:<18} {default:<22} {doc}")
    return "options (YAML keys or --set KEY=VALUE; default, meaning):\n" + "\n".join(rows)


def add_parser(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser(
        "train",
        help="train a MaskablePPO agent (needs the train extra)",
        description="Train MaskablePPO in one seat of the batched engine. CONFIG is a YAML file or a "
        "built-in name (ppo_vs_bots, selfplay); --set overrides single options.",
        epilog=option_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tr.add_argument("config", nargs="?", help="train YAML or built-in name, e.g. ppo_vs_bots")
    tr.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config option")
    tr.set_defaults(func=run, parser=tr)


def run(args: argparse.Namespace) -> int:
    if not args.config:  # a real run is never started by accident
        print("usage: meld8 train CONFIG [--set KEY=VALUE ...]  (CONFIG: a YAML file or ppo_vs_bots, selfplay; "
              "meld8 train --help lists every option)", file=sys.stderr)  # fmt: skip
        return 2
    try:
        from training.train_ppo import TrainConfig, train
    except ImportError as exc:
        raise ValueError(f"training needs the train extra: {HINT} (missing: {exc.name})") from None
    try:
        cfg = TrainConfig.load(args.config, args.set)
        final = train(cfg)
    except ModuleNotFoundError as exc:
        raise ValueError(f"training needs the train extra: {HINT} (missing: {exc.name})") from None
    print(f"trained: {final} (best evaluation: {final.parent / 'best.zip'}, logs: {final.parent / 'tb'})")
    return 0
