"""``meld8 train``: train a MaskablePPO agent (needs the train extra)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser("train", help="train a MaskablePPO agent (needs the train extra)")
    tr.add_argument("config", nargs="?", help="train YAML, e.g. configs/train/ppo_vs_bots.yaml")
    tr.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config option")
    tr.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from training.train_ppo import TrainConfig, train
    except ImportError as exc:
        raise ValueError(f"training needs the train extra: pip install torch==2.13.0 'meld8[train]' ({exc})") from None
    cfg = TrainConfig.load(args.config, args.set)
    final = train(cfg)
    print(f"trained: {final} (best evaluation: {final.parent / 'best.zip'}, logs: {final.parent / 'tb'})")
    return 0
