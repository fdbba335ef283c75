"""``meld8 train``: train a MaskablePPO agent (needs the train extra)."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys

HINT = "pip install torch==2.13.0 'meld8[train]' (CPU wheel first; see the README)"


RLLIB_HINT = "pip install torch==2.13.0 'meld8[rllib]' (CPU wheel first; see the README)"


def option_table(module: str = "training.train_ppo", name: str = "TrainConfig", title: str = "options") -> str:
    """Every option of a train config class with its default and meaning, read from the source
    without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    tree = ast.parse(open(spec.origin).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
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
    return f"{title} (YAML keys or --set KEY=VALUE; default, meaning):\n" + "\n".join(rows)


def add_parser(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser(
        "train",
        help="train a MaskablePPO agent (needs the train extra)",
        description="Train MaskablePPO in one seat of the batched engine (--backend sb3, the default), or PPO "
        "on Ray RLlib in a self-play league (--backend rllib). CONFIG is a YAML file or a built-in name "
        f"({_builtin_list()}); --set overrides single options. Both backends share one run folder layout and "
        "the same names for the options they share; a folder that holds a run is only continued "
        "(--set resume=true).",
        epilog=option_table() + "\n\n" + option_table("training.rllib_train", "RllibConfig", "--backend rllib options"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tr.add_argument("config", nargs="?", help=f"train YAML or built-in name ({_builtin_list()})")
    tr.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config option")
    tr.add_argument("--backend", choices=["sb3", "rllib"], default="sb3",
                    help="sb3: MaskablePPO in one process (default); rllib: Ray RLlib, local or on a "
                    "cluster")  # fmt: skip
    tr.add_argument("--address", help="--backend rllib: the Ray cluster (default RAY_ADDRESS, else a local instance)")
    tr.set_defaults(func=run, parser=tr)


def run(args: argparse.Namespace) -> int:
    if args.address is not None:
        from training.train_options import check_address

        if args.backend != "rllib":
            raise ValueError("--address is for --backend rllib (the SB3 backend runs in this process)")
        check_address(args.address, "--address")
    if not args.config:  # a real run is never started by accident
        print(f"usage: meld8 train CONFIG [--set KEY=VALUE ...]  (CONFIG: a YAML file or {_builtin_list()}; "
              "meld8 train --help lists every option)", file=sys.stderr)  # fmt: skip
        return 2
    if args.backend == "rllib":
        return run_rllib(args)
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
    print(best_line(final.parent, "learner steps"))
    return 0


def run_rllib(args: argparse.Namespace) -> int:
    try:
        import ray.rllib  # noqa: F401
        import torch  # noqa: F401

        from training.rllib_train import RllibConfig, train
    except ImportError as exc:
        raise ValueError(f"--backend rllib needs the rllib extra: {RLLIB_HINT} (missing: {exc.name})") from None
    overrides = list(args.set) + ([f"address={args.address}"] if args.address else [])
    cfg = RllibConfig.load(args.config, overrides)
    best = train(cfg)
    print(f"trained: {best} (play it: --agents rllib:{best}; curve: {best.parent / 'learning_curve.png'})")
    print(best_line(best.parent, "env steps"))
    return 0


def best_line(out, steps: str) -> str:
    """The run's best evaluation in one line (from eval.jsonl), the last thing a run prints. Only rows whose
    placement and score are finite numbers count: a ``"mean_score": "x"`` ended a finished run in "Unknown format
    code 'f'" (red team, session 35)."""
    from training.run_folder import RunFolder, finite_number

    rows = [r for r in RunFolder(out, "sb3").rows("eval.jsonl")
            if finite_number(r.get("mean_placement")) and finite_number(r.get("mean_score"))]  # fmt: skip
    if not rows:
        return "best: no evaluation yet"
    b = min(rows, key=lambda r: r["mean_placement"])
    return (f"best: mean placement {b['mean_placement']:.3f} (mean score {b['mean_score']:,.0f}) at "
            f"{b.get('timesteps')} {steps}, {len(rows)} evaluations")  # fmt: skip


def _builtin_list() -> str:
    from meld8_env.config_io import builtin_names

    return ", ".join(builtin_names("train"))
