"""``search``: flat determinized search (PIMC) from the seat's information set, scored in placement units.

At each decision (docs/search.md has the whole story):

1. Candidates: the discards ranked by distance to win after the discard, then acceptance, then the danger
   count below, then card id, cut to ``cands``, plus always the safest discard (fewest live wait shapes over
   the opponents, ``agents.defensive.danger``) and the continuation bot's own choice; every legal call and pass
   in a claim. One candidate that is the bot's own choice is played unsearched.
   Tsumo / Ron are taken at once, except in the last ``win_rounds`` rounds, where they are searched like any
   other candidate (placement can make a small win wrong, R40).
2. Worlds: ``worlds`` records sampled once from the information set (``search_backend.sample_worlds``,
   ``belief=two_level|uniform|learned`` (learned: the per-card wait model, ``meld8_env.wait_model``), or
   two_level with the ``belief.sample_worlds`` flag ``no_pass`` or ``last_discard``), shared by every
   candidate (common random numbers: the same worlds and the same rollout seeds, so candidates are compared
   on the same deals).
3. Each (candidate, world): the candidate is applied to a copy of the world, then the hand is rolled out to
   its end with the C bots (opponents ``opp``: ``greedy``, ``defensive`` or ``mix`` = each opponent drawn per
   world; own continuation ``me``: ``greedy``, ``defensive``, or ``oracle``, the C policy that plays greedy but
   never discards a card another seat of the world would Ron: it reads the world's sampled hands, so the seat
   continues as a perfect defender *of that world*, which it knows only because the world is a guess; the
   decision still reads nothing but the information set. With ``oracle`` the bot's own choice kept by the
   margin rule below is greedy's), or a network, ``ppo``, ``distilled`` or ``ppo:PATH.zip``: the rollouts pause at the
   seat's decisions (``meld8_env.rollout``'s external seats) and the network decides every paused world of the
   batch in one forward pass, deterministically (its most probable legal action); its own choice is then the one
   the margin rule keeps. ``lite=1`` (off by default; a measured negative, docs/search_log.md) plays the rollouts'
   greedy / defensive as ``greedy_lite`` / ``defensive_lite``: the tie-break between discards two or more cards
   from winning by the size of the acceptance pool instead of the exact count (``meld8_env.policies``), which
   makes a rollout cheaper but a less faithful model of the bots it stands for; the bot's own choice at the
   root is still the real bot's. ``menu=defensive`` (``menu=greedy`` with ``me=defensive``; off by default, a
   measured negative) rolls every candidate but Tsumo / Ron out again with the seat continuing as the other bot
   on the same worlds (candidate id + ``MENU``); an action is valued by its better continuation, the halving
   ranks (action, continuation) pairs but keeps at least two actions, and the margin rule and the extension
   compare actions, each under its better continuation.
4. Leaf: minus the seat's expected final placement from ``meld8_env.placement`` (``leaf=placement``), or
   the hand's point change in thousands (``leaf=points``, the ablation).
4b. Screening (``screen`` = M > ``worlds``, off by default): M worlds are sampled, the first ``worlds`` of
   them the rollout worlds. Each candidate is first stepped in all M; where the hand ends at once (a Tsumo,
   or a Ron offered on the discard, which the modelled bots always take) it is played out there (one step),
   so the chance of an immediate deal-in and its cost come from M worlds. A candidate's value is then the
   stratified mean p * (mean over those M-world endings) + (1 - p) * (mean over the rollout worlds where
   the hand goes on), p the weight of the endings; the rollout worlds that ended are not rolled out again.
4c. ``ron=model`` (off by default; a measured negative, docs/search_log.md): a discard candidate's value is
   r * V_ron + (1 - r) * V_rest, r the wait model's deal-in risk (``agents.wary.deal_in_risk``), V_rest the
   mean over the rollout worlds where nobody is offered a Ron on the discard, V_ron the mean where someone
   is (this candidate's screened worlds, else every candidate's, else V_rest - ``ron_cost``/100). ``ron_scale``
   (percent, 100 by default) scales each opponent's ``P(ready) * q(c)`` first: the model counts waits without
   the yaku a Ron needs and overstates the chance of a Ron about 2x on bot games (``agents.wary.RON_SCALE`` = 0.45).
   ``ron=truth`` (CHEATING, needs the true records): r is 1 where the true record offers a Ron on the discard,
   else 0 (``agents.oracle.ron_discards``): what a perfect per-card danger model would be worth in this formula.
   With ``ron_signal=k`` (tenths) r is instead the calibrated model's risk updated by a noisy signal of the truth,
   s ~ N(+-d'/2, 1), d' = k/10 (likelihood ratio exp(d' s)): a predictor of any quality between the model and the
   truth, so that the value of per-card danger can be read against its AUC (``bench/search_regret.py``).
   ``ron=status`` (CHEATING): the calibrated model's risk with each opponent's TRUE ready status for its prior (what
   a perfect status model would give this formula, the per-card part still the model's).
5. Successive halving: the worlds are split into ``stages`` chunks; after each chunk the better half of the
   candidates (at least two) goes on to the next chunk; the best weighted mean wins (ties: prior order),
   except that the continuation bot's own choice (always a candidate, never halved away) is kept unless the
   best beats it by more than ``margin``/10 standard errors of their paired difference on the same worlds.
   ``keep=prior`` (with a network ``prior``) keeps the network's own choice instead: the search is then the
   network corrected where its rollouts beat it by more than the margin, the teacher of expert iteration
   (``python -m training.distill iterate``). ``final=pair`` (off; measured no gain, docs/search_log.md
   "Session 21"): the last halving keeps only the bot's choice and its best challenger, so the margin rule's
   own comparison gets the last stage's worlds.

5b. Extension (``extend`` = N, 336 by default since session 21; 0 = off): after the stages, while the verdict is
   in doubt (the challenger's paired gain within ``extend_z``/10 = 1 standard error of the margin), a fresh chunk
   of worlds (``worlds // stages``, from the decision's second random stream) is rolled out for the bot's choice and its
   challenger (``extend_set=pair``) or for every candidate still alive (``alive``), up to N worlds more; the final
   choice then reads every world the set saw (``_extend`` says when a verdict is in doubt). The budget goes to the
   close verdicts, where the 4x budget's gain was (docs/search_log.md "Session 16"): the median decision stays near the
   stages' cost, the close ones get up to 384 worlds. It works on plain rollout worlds: with ``screen`` or
   ``ron=model`` it is off unless asked for, and asking for both is refused.

Every decision of a batch is searched together (one rollout call per stage for games x candidates x worlds).
A decision is a pure function of the agent's seed and the information set (its random stream is seeded
from both), so it is deterministic and cannot depend on hidden cards or the game seed.

Options (spec ``search:worlds=32,cands=3,...``; on a command line whose agent list is comma-separated,
``search:worlds=32+cands=3``): ``worlds`` (48), ``cands`` (3), ``stages`` (2), ``opp`` (mix), ``me`` (greedy),
``leaf`` (placement), ``belief`` (two_level), ``win_rounds`` (2), ``margin`` (5), ``threads`` (2), ``split``
(equal), ``ron`` (worlds; model: 4c), ``ron_scale`` (100; 4c), ``ron_cost`` (30), ``prior`` (greedy: which
discards are candidates, greedy's order or a network's, ``ppo`` / ``distilled`` / ``ppo:PATH.zip``, by its
policy's probabilities; a path may hold neither ``,`` nor ``+``), ``keep`` (bot; prior: see 5), ``screen`` (0 = off),
``lite`` (0 = off; 1: see 3), ``menu`` (none; see 3), ``extend`` (336; 0 = off; 5b), ``extend_set`` (pair),
``extend_z`` (10), ``final`` (all; pair: see 5),
``strat`` (0 = off; 1 = the worlds' weights post-stratified so that each opponent is
ready in the share of the weight the belief's fitted prior says, ``search_backend.stratify``), ``width`` (0 = off;
1 = each world weighted by how much more often bot games' ready hands wait on that many cards than the
two-level worlds' do, ``search_backend.width_weights``, applied before ``strat``; a measured negative,
docs/search_log.md "Session 27"), and the diagnostic
``cheat`` (0): 1 = CHEATING, worlds keep the opponents' TRUE hands (only the wall order is resampled); 2 = CHEATING
about the status only: worlds sampled as usual, kept only where every opponent's ready status (R33) is its TRUE
status (the ceiling of a perfect status model); 3 = the same with the TRUE level (ready / not ready but within two
cards of winning / further, ``search_backend.level_in_worlds``); 4 = the TRUE hands blurred: in each world ``noise``
(0) concealed cards of every opponent are swapped with random undrawn cards (``search_backend.swap_into_wall``),
how much the ceiling falls as knowledge of the hands gets worse; all need the caller to pass the true records
(``act_batch(..., records=...)``) and exist only to measure the ceiling that better belief could reach. Default
budget: at most ``cands + 2`` candidates x (``worlds`` / ``stages``) rollouts in the first stage, then the better
half (and the bot's choice, which always stays): with five candidates at most 5 x 24 + 4 x 24 = 216 rollouts per
decision; then, where the verdict is in doubt, the pair on up to 336 more worlds (2 x 24 rollouts a chunk). About
2.3x the stages' rollouts on average (303 against 133 per decision), a median of about 9.7 ms per decision on two
cores (p90 about 40 ms) against 6.8 ms without the extension, and 1.783 [1.762, 1.804] against defensive + greedy in
5,004 games on a fresh seed, paired -0.031 [-0.055, -0.006] against the same search without it
(docs/search_log.md "Session 21"; ``extend=0`` is the session-14 default, 1.814 on those boards). ``split``
(equal): ``double`` makes each stage's worlds about twice the last's (``stage_chunks``).

Where the caller gives no information sets (a face that does not pass them) the agent plays as
``defensive`` and counts those decisions in ``fallback_decisions``.
"""

from __future__ import annotations

import math

import numpy as np

from agents import search_backend as sb
from agents.defensive import DefensiveAgent
from agents.greedy import GreedyAgent
from agents.oracle import ron_discards
from agents.torch_threads import one_torch_thread
from agents.wary import RON_SCALE, deal_in_risk, deal_in_risk_rows
from meld8_env.actions import DISCARD_MAX, NUM_ACTIONS, PASS, RON, TSUMO
from meld8_env.agent import Agent, reseed_in_place
from meld8_env.cardmask import discard_masks
from meld8_env.codes import Phase, Result
from meld8_env.config_io import short_repr
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.engine.records import put_records, refresh, take_records
from meld8_env.features import danger, discard_table
from meld8_env.infoset import InfoSet
from meld8_env.observation import decode
from meld8_env.placement import shipped_table
from meld8_env.policies import EXTERNAL_CODE, POLICY
from meld8_env.rollout import MAX_THREADS
from meld8_env.rules import RuleConfig
from meld8_env.spec_options import int_option, spec_options

OPTIONS: dict[str, tuple[type, object, str]] = {
    "worlds": (int, 48, "worlds sampled per decision (>= 1)"),
    "cands": (int, 3, "discards kept by the prior (>= 1); the safest is added"),
    "stages": (int, 2, "successive-halving stages (>= 1)"),
    "opp": (str, "mix", "opponent model in rollouts: greedy, defensive or mix"),
    "me": (
        str,
        "greedy",
        "own continuation in rollouts: greedy, defensive, oracle, or a network (ppo, distilled, ppo:PATH.zip)",
    ),
    "leaf": (str, "placement", "leaf value: placement (expected final placement) or points"),
    "belief": (
        str,
        "two_level",
        "sampler: two_level, uniform, learned, no_pass or last_discard (two_level + that flag)",
    ),
    "win_rounds": (int, 2, "search Tsumo/Ron in the last N rounds (0: always win)"),
    "margin": (int, 5, "leave the bot's own choice only when the paired gain exceeds margin/10 standard errors"),
    "threads": (int, 2, "rollout threads (at most; a stage of fewer than 16 rollouts uses one)"),
    "cheat": (
        int,
        0,
        "CHEATING diagnostics: 1 = worlds keep the true hidden hands, 2 = the true ready statuses, 3 = the true levels,"
        " 4 = the true hands with `noise` cards of each opponent swapped into the wall",
    ),
    "noise": (int, 0, "with cheat=4: concealed cards of each opponent swapped with random undrawn cards per world"),
    "screen": (int, 0, "worlds screened for an immediate end (a Ron on the discard); 0 = off (see _search)"),
    "strat": (int, 0, "1 = weight the worlds so each opponent's ready share is its fitted prior (see _worlds)"),
    "width": (int, 0, "1 = weight the worlds by how wide real ready hands wait (search_backend.width_weights)"),
    "prior": (
        str,
        "greedy",
        "which discards are candidates: greedy's order, or a network's (ppo, distilled, or ppo:PATH.zip)",
    ),
    "keep": (
        str,
        "bot",
        "the choice the margin rule keeps: the continuation bot's (bot) or the prior network's (prior)",
    ),
    "safe": (str, "danger", "the safest discard added: by defensive's danger count, or the wait model's risk (model)"),
    "ron": (
        str,
        "worlds",
        "chance of a Ron on a discard: from the worlds, the wait model's risk (model), or CHEATING the truth (truth) "
        "or the model's waits with the true ready statuses (status)",
    ),
    "ron_scale": (int, 100, "with ron=model: the wait model's per-opponent risk x ron_scale/100 (45 = calibrated)"),
    "ron_signal": (
        int,
        0,
        "with ron=truth: instead of the truth, the calibrated model's risk updated by a noisy signal of it of "
        "strength d' = ron_signal/10 (0 = the truth itself)",
    ),
    "ron_cost": (int, 30, "with ron=model and no Ron in any world: a deal-in's cost in hundredths of a placement"),
    "lite": (int, 0, "1 = the rollouts' greedy / defensive break ties by pool size (greedy_lite, defensive_lite)"),
    "split": (str, "equal", "worlds per stage: equal chunks, or double (each stage twice the last; see stage_chunks)"),
    "final": (
        str,
        "all",
        "the last stage rolls out every candidate the halving kept (all), or the bot's choice and challenger (pair)",
    ),
    "extend": (int, 336, "up to N more worlds where the verdict is in doubt (0 = off; see extend_set)"),
    "extend_set": (
        str,
        "pair",
        "what extend rolls out: the bot's choice and its challenger (pair), or every alive one",
    ),
    "extend_z": (int, 10, "extend while the verdict is within extend_z/10 standard errors (see _extend)"),
    "menu": (
        str,
        "none",
        "a second own continuation (greedy or defensive): each candidate is also rolled out with it, and its value "
        "is its better continuation's (see per_action_values)",
    ),
}
#: shipped networks an option may name (``meld8_env.agent_spec``); the options of NETWORK_OPTIONS also take
#: ``ppo:PATH.zip``
NETWORKS = ("ppo", "distilled")
NETWORK_OPTIONS = ("prior", "me")


def names_network(value: object) -> bool:
    """True when a value of a :data:`NETWORK_OPTIONS` option names a network: a shipped one, or ``ppo:PATH.zip``."""
    return value in NETWORKS or str(value).startswith("ppo:")


#: a stage with fewer rollouts than this runs them on one thread (see ``_play``); one decision's stage (40-160
#: rollouts to the end of the hand) gains from the split: 0.70-0.875x the wall time per decision at 16-64 worlds
#: (docs/search_log.md, the A/B of session 13)
ROLLOUT_SPLIT_MIN = 16

CHOICES = {
    "opp": ("greedy", "defensive", "mix"),
    "me": ("greedy", "defensive", "oracle") + NETWORKS,
    "leaf": ("placement", "points"),
    "belief": ("two_level", "uniform", "learned", "no_pass", "last_discard"),
    "prior": ("greedy",) + NETWORKS,
    "safe": ("danger", "model"),
    "ron": ("worlds", "model", "truth", "status"),
    "split": ("equal", "double"),
    "final": ("all", "pair"),
    "extend_set": ("pair", "alive"),
    "keep": ("bot", "prior"),
    "menu": ("none", "greedy", "defensive"),
}

#: a candidate rolled out with the ``menu`` continuation is its action + MENU (actions are below NUM_ACTIONS)
MENU = NUM_ACTIONS


def parse_options(text: str) -> dict[str, object]:
    """``k=v,k=v`` (or ``k=v+k=v``, for command lines whose agent lists are comma-separated) -> options
    (ValueError in one line naming the bad part and the allowed ones; ``meld8_env.spec_options``)."""
    raw = spec_options(text, "search", OPTIONS)
    return {k: int_option("search", k, v) if OPTIONS[k][0] is int else v for k, v in raw.items()}


def screens(opts: dict[str, object]) -> bool:
    """Whether a search with these (full) options steps each candidate in the screened worlds first: ``screen``
    above ``worlds`` (4b), or ``ron=model``, which needs the worlds where a Ron is offered on the discard told apart."""
    return int(opts["screen"]) > int(opts["worlds"]) or opts["ron"] != "worlds"


def check_options(opts: dict[str, object]) -> dict[str, object]:
    # SearchAgent(**options) bypasses parse_options: an unknown key was ignored, worlds=2.5 or '8' taken, and None,
    # nan or inf failed in int() without naming the option (red team, session 48b)
    for key, value in opts.items():
        if key not in OPTIONS:
            raise ValueError(f"search option {str(key)[:40]!r}: unknown: use one of {', '.join(OPTIONS)}")
        if OPTIONS[key][0] is int and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise TypeError(f"search option {key}={str(value)[:40]!r}: give an integer, got {type(value).__name__}")
        if OPTIONS[key][0] is str and not isinstance(value, str):
            raise TypeError(f"search option {key}={str(value)[:40]!r}: give a string, got {type(value).__name__}")
    full = {k: spec[1] for k, spec in OPTIONS.items()} | opts
    for key in ("worlds", "cands", "stages"):
        if not 1 <= int(full[key]) <= 4096:
            raise ValueError(f"search option {key}={full[key]}: must be 1..4096")
    if not 1 <= int(full["threads"]) <= MAX_THREADS:  # the rollout's own limit, refused here before any game starts
        raise ValueError(f"search option threads={full['threads']}: must be 1..{MAX_THREADS}")
    if not 0 <= int(full["screen"]) <= 4096:
        raise ValueError(f"search option screen={full['screen']}: must be 0..4096 (0 = off)")
    if not 0 <= int(full["margin"]) <= 100:
        raise ValueError(f"search option margin={full['margin']}: must be 0..100 (tenths of a standard error)")
    if not 0 <= int(full["extend"]) <= 4096:
        raise ValueError(f"search option extend={full['extend']}: must be 0..4096 (0 = off)")
    if not 1 <= int(full["extend_z"]) <= 100:
        raise ValueError(f"search option extend_z={full['extend_z']}: must be 1..100 (tenths of a standard error)")
    if not 0 <= int(full["win_rounds"]) <= 16:
        raise ValueError(f"search option win_rounds={full['win_rounds']}: must be 0..16")
    for key in ("strat", "lite", "width"):
        if full[key] not in (0, 1):
            raise ValueError(f"search option {key}={full[key]}: must be 0 or 1")
    if not 1 <= int(full["ron_scale"]) <= 200:
        raise ValueError(f"search option ron_scale={full['ron_scale']}: must be 1..200 (percent of the model's risk)")
    if not 0 <= int(full["ron_cost"]) <= 300:
        raise ValueError(f"search option ron_cost={full['ron_cost']}: must be 0..300 (hundredths of a placement)")
    if full["cheat"] not in (0, 1, 2, 3, 4):
        raise ValueError(f"search option cheat={full['cheat']}: must be 0, 1, 2, 3 or 4")
    if not 0 <= int(full["noise"]) <= 13:
        raise ValueError(f"search option noise={full['noise']}: must be 0..13 (cards per opponent)")
    if "noise" in opts and full["cheat"] != 4:
        raise ValueError("search option noise blurs the true hands of cheat=4: use it with cheat=4")
    for key, allowed in CHOICES.items():
        if key in NETWORK_OPTIONS and names_network(full[key]):
            continue  # a checkpoint is checked by loading it, which says what is wrong with the file
        if full[key] not in allowed:
            also = " or ppo:PATH.zip (a checkpoint)" if key in NETWORK_OPTIONS else ""
            raise ValueError(f"search option {key}={full[key]!r}: must be one of {', '.join(allowed)}{also}")
    if not 0 <= int(full["ron_signal"]) <= 100:
        raise ValueError(f"search option ron_signal={full['ron_signal']}: must be 0..100 (tenths of d')")
    if "ron_signal" in opts and full["ron"] != "truth":
        raise ValueError("search option ron_signal blurs the truth of ron=truth: use it with ron=truth")
    if "ron_scale" in opts and full["ron"] != "model":
        raise ValueError("search option ron_scale scales the wait model's risk: use it with ron=model")
    if int(full["width"]) and full["cheat"] in (1, 4):
        raise ValueError("search option width weights sampled worlds; cheat=1|4 samples none (it keeps the true hands)")
    # an option that would change nothing in this combination is refused, not ignored (review helper, session 42)
    for key in ("belief", "strat", "width"):
        if key in opts and full["cheat"]:
            raise ValueError(
                f"search option {key} shapes the sampled worlds, which cheat={full['cheat']} builds from the true "
                "records instead: drop it"
            )
    if int(full["worlds"]) < 2 and int(full["margin"]):
        raise ValueError(
            f"search option worlds={full['worlds']}: the margin rule needs a standard error over at least 2 worlds "
            "to leave the bot's choice: use worlds >= 2 (or margin=0)"
        )
    if int(full["stages"]) > int(full["worlds"]):
        raise ValueError(
            f"search option stages={full['stages']}{'' if 'stages' in opts else ' (the default)'}: each stage rolls "
            f"out at least one world, so at most worlds={full['worlds']}"
        )
    for key in ("final", "split"):
        if key in opts and int(full["stages"]) == 1:
            raise ValueError(f"search option {key} shapes the stages of a halving, and stages=1 has none: drop it")
    if int(full["extend"]) == 0 and not screens(full):
        for key in ("extend_z", "extend_set"):
            if key in opts:
                raise ValueError(f"search option {key} tunes the extension, which extend=0 turns off: drop it")
    if "ron_cost" in opts and full["ron"] != "model":
        raise ValueError("search option ron_cost prices a deal-in under ron=model: use it with ron=model")
    if full["keep"] == "prior" and full["prior"] == "greedy":
        raise ValueError("search option keep=prior keeps a network's choice: give prior=ppo, distilled or ppo:PATH.zip")
    if full["menu"] != "none":
        if full["me"] not in ("greedy", "defensive") or full["menu"] == full["me"]:
            raise ValueError(
                f"search option menu={full['menu']} is a second bot continuation beside me={full['me']}: use "
                "menu=defensive with me=greedy, or menu=greedy with me=defensive"
            )
        if screens(full):
            raise ValueError("search option menu works with plain rollout worlds: use it with screen=0 and ron=worlds")
    if screens(full):
        # the extension works on plain rollout worlds: off by default with screening or ron=model, refused if asked
        if "extend" in opts and int(full["extend"]):
            raise ValueError(
                "search option extend works with plain rollout worlds: use it with screen=0 and ron=worlds"
            )
        for key in ("extend_z", "extend_set"):
            if key in opts:
                raise ValueError(
                    f"search option {key} and the others of extend work with the extension, which is off with "
                    "screen or ron=model|truth: drop it"
                )
        full["extend"] = 0
    return full


def is_cheating(opts: dict[str, object]) -> bool:
    """Whether a search with these (full) options is a CHEATING diagnostic that reads the true records
    (``cheat=1..4``, ``ron=truth|status``)."""
    return bool(opts["cheat"]) or opts["ron"] in ("truth", "status")


def cheats(options: str) -> bool:
    """Whether ``search:OPTIONS`` is a CHEATING diagnostic, from its options alone (no network is loaded): a face
    that never hands out the true records refuses it before it reads anything (``meld8 review``). A bad option is
    the ValueError :func:`load_search` raises."""
    return is_cheating(check_options(parse_options(options)))


class SearchAgent(Agent):
    name = "search"
    wants_infoset = True

    def __init__(self, rules: RuleConfig | None = None, seed: int = 0, **options: object) -> None:
        super().__init__(rules, seed)
        self.opts = check_options(dict(options))
        # the CHEATING diagnostics read the true records (cheat=1..4, ron=truth|status); named apart in results
        self.cheating = is_cheating(self.opts)
        if self.cheating:
            self.name = "search-CHEAT"
            self.wants_records = True  # meld8_env.agent.Agent.wants_records
        self.fallback_decisions = 0
        self.rollouts = 0  # (candidate, world) pairs stepped so far: the budget spent, whatever the machine's load
        self.last_values: list[dict[int, tuple[float, float]]] = []
        self.last_risks: list[dict[int, float]] = []  # ron other than worlds: each decision's risk per candidate
        self.setup(self.rules)

    def setup(self, rules: RuleConfig) -> None:
        self.rules = rules
        self.table = shipped_table(rules) if self.opts["leaf"] == "placement" else None
        self._greedy = GreedyAgent(rules=rules, seed=self.seed)
        self._defensive = DefensiveAgent(rules=rules, seed=self.seed)
        self._net = self._network("prior") if names_network(self.opts["prior"]) else None
        # the network as the seat's own continuation: the rollouts pause at its decisions (meld8_env.rollout's
        # external seats) and it decides every paused world of the batch in one forward pass
        self._me_net = self._network("me") if names_network(self.opts["me"]) else None

    def reseed(self, seed: int) -> None:
        """Decide as if made with ``seed`` (every decision's stream is drawn from ``self.seed`` and the information
        set); the networks it loaded are not loaded again."""
        self.seed = seed
        for agent in (self._greedy, self._defensive, self._net, self._me_net):
            if agent is not None:
                reseed_in_place(agent, seed)

    def _network(self, key: str) -> Agent:
        """The network an option names (its policy, deterministic: the most probable legal action)."""
        from agents.checkpoint import TRUST_ADVICE
        from meld8_env.agent_spec import load_agent

        try:
            return load_agent(str(self.opts[key]), self.rules, seed=self.seed)
        except ValueError as exc:  # AgentLoadError: name the option, not only the file
            # a command's --trust-checkpoint never reaches a search's networks: do not suggest it
            why = str(exc).replace(f". {TRUST_ADVICE}", ": a search option loads only meld8's own checkpoints")
            raise ValueError(f"search option {key}={self.opts[key]}: {why}") from None
        except OSError as exc:  # a path the system refuses (File name too long) came out of pathlib (session 48b)
            raise ValueError(
                f"search option {key}={str(self.opts[key])[:80]}: cannot read the checkpoint "
                f"({exc.strerror or type(exc).__name__}): give the path of a checkpoint .zip"
            ) from None

    # -- the agent protocol ---------------------------------------------------------------------------
    def act_batch(
        self, obs: np.ndarray, masks: np.ndarray, infosets: list | None = None, records: np.ndarray | None = None
    ) -> np.ndarray:
        if self._net is None and self._me_net is None:
            return self._act_batch(obs, masks, infosets, records)
        with one_torch_thread():  # its networks see a few rows at a time; the rollouts' threads hold the cores
            return self._act_batch(obs, masks, infosets, records)

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray, infosets: list | None, records: np.ndarray | None):
        obs, masks = self._batch(obs, masks, records)
        n = len(masks)
        if self.cheating and records is None:
            raise ValueError(
                "search:cheat=1|2|3|4 and ron=truth|status need the true records (act_batch(..., records=...)); "
                "they are diagnostics"
            )
        if infosets is None and records is None:
            self.fallback_decisions += n
            self.last_values = [{} for _ in range(n)]
            return self._defensive.act_batch(obs, masks)
        if infosets is None:
            infosets = [sb.infoset_of(records[i], int(records[i]["acting"]), self.rules) for i in range(n)]
        self._check_infosets(masks, infosets)
        out, cands, net_act = self._candidates(obs, masks, infosets)
        todo = [i for i in range(n) if out[i] < 0]
        self.last_values = [{} for _ in range(n)]
        self.last_risks = [{} for _ in range(n)]
        if todo:
            if self.opts["keep"] == "prior":  # expert iteration: the network's move, changed only when clearly worse
                default = net_act[todo]  # _candidates' forward pass
            else:
                if self._me_net is not None:  # the continuation's own choice, as with the bots
                    bot = self._me_net
                else:
                    bot = self._defensive if self.opts["me"] == "defensive" else self._greedy  # oracle: honest part
                default = bot.act_batch(obs[todo], masks[todo])
            for i, a in zip(todo, default.tolist(), strict=True):  # the continuation bot's choice is a candidate
                if a not in cands[i]:
                    cands[i].append(a)
                if len(cands[i]) == 1:  # one candidate, the bot's own choice: nothing to compare
                    out[i] = a
                elif self.opts["menu"] != "none":
                    cands[i] += [c + MENU for c in cands[i] if c not in (TSUMO, RON)]
            keep = [k for k, i in enumerate(todo) if out[i] < 0]
            todo, default = [todo[k] for k in keep], default[keep]
            best = self._search(todo, [cands[i] for i in todo], infosets, records, default.tolist()) if todo else []
            for i, (a, vals) in zip(todo, best, strict=True):
                out[i] = a % MENU
                self.last_values[i] = per_action_values(vals)
        return out

    def _batch(self, obs, masks, records) -> tuple[np.ndarray, np.ndarray]:
        """(obs, bool masks) of one ``act_batch`` call, or one ValueError: the shapes, masks of 0 / 1 with a legal
        action in every row, and the true records (diagnostics) one live engine record per row. Checked once a
        call, where the batch comes in (red team, session 48: a 1-d row, a short mask, a row with nothing legal
        or a bare record failed with IndexError / AxisError deep inside, and a mask of 0.5 or -1 was read as
        legal here but as illegal by the bots)."""
        obs, masks = np.asarray(obs), np.asarray(masks)
        if obs.ndim != 2 or masks.shape != (len(obs), NUM_ACTIONS):
            raise ValueError(
                f"search: act_batch takes observations (B, D) and masks (B, {NUM_ACTIONS}) for the same B rows, got "
                f"shapes {obs.shape} and {masks.shape}"
            )
        if masks.dtype != bool:
            if masks.dtype.kind not in "uif" or not ((masks == 0) | (masks == 1)).all():
                raise ValueError(
                    f"search: masks hold 0 or 1 per action (bool), got {masks.dtype} values beside 0 and 1"
                )
            masks = masks.astype(bool)
        empty = np.flatnonzero(~masks.any(axis=1))
        if empty.size:
            raise ValueError(
                f"search: masks row {int(empty[0])} has no legal action (a finished game, or a seat that is not asked "
                "to act): ask the agent only for the seat that acts"
            )
        if records is not None:
            if not isinstance(records, np.ndarray) or records.dtype != STATE_DTYPE or records.shape != (len(masks),):
                got = (
                    f"{records.dtype} of shape {records.shape}"
                    if isinstance(records, np.ndarray)
                    else type(records).__name__
                )
                raise ValueError(
                    f"search: records must be a 1-d array of {len(masks)} engine records (STATE_DTYPE), one per row, "
                    f"got {got}"
                )
            over = np.flatnonzero(records["phase"] == int(Phase.OVER))
            if over.size:
                raise ValueError(f"search: records row {int(over[0])} is a finished game: no seat acts in it")
        return obs, masks

    def _check_infosets(self, masks: np.ndarray, infosets) -> None:
        """One ValueError (TypeError for what is no InfoSet) unless ``infosets`` holds, for each row, the information
        set of the seat that acts there: its legal actions are the row's mask. An infoset of another seat, state or
        rule set failed deep inside the sampler or the rollouts (red team, session 48); the rest of it is checked
        where the worlds are sampled (``InfoSet.check``)."""
        try:
            k = len(infosets)
        except TypeError:
            raise TypeError(
                f"search: infosets must be a list of InfoSet, one per row, got {short_repr(infosets)}"
            ) from None
        if k != len(masks):
            raise ValueError(f"search: {k} infosets for {len(masks)} rows: give one per row")
        legal = np.packbits(masks, axis=1, bitorder="little").view("<u8")[:, 0].tolist()
        for i, (info, want) in enumerate(zip(infosets, legal, strict=True)):
            if not isinstance(info, InfoSet):
                raise TypeError(
                    f"search: infosets[{i}] is not an InfoSet (meld8_env.infoset.infoset), got {short_repr(info)}"
                )
            if info.num_players != self.rules.num_players:
                raise ValueError(
                    f"search: infosets[{i}] is of a {info.num_players}-player game, the agent plays "
                    f"{self.rules.num_players}-player rules"
                )
            if info.legal != want:
                raise ValueError(
                    f"search: infosets[{i}] is not the acting seat's information set of row {i}: its legal actions "
                    f"({info.legal:#x}) are not the row's mask ({want:#x})"
                )

    def hint_values(self, obs: np.ndarray, mask: np.ndarray, infoset, record: np.ndarray | None = None) -> dict:
        """Per-action mean leaf values of one decision (the review's hint): {action: (value, weight)} (with
        ``menu``, each action's continuation that the verdict read)."""
        rec = None if record is None else np.asarray(record, STATE_DTYPE).reshape(1)
        self.act_batch(np.asarray(obs)[None], np.asarray(mask)[None], [infoset], rec)
        return self.last_values[0]

    # -- candidates -----------------------------------------------------------------------------------
    def _late(self, info_round: np.ndarray) -> np.ndarray:
        return info_round >= self.rules.rounds - int(self.opts["win_rounds"])

    def _candidates(self, obs: np.ndarray, masks: np.ndarray, infosets: list) -> tuple[np.ndarray, list, np.ndarray]:
        """Decided actions (-1: to search), each decision's candidate list in prior order, and the prior network's
        own move in each decision left to search (-1 elsewhere, and everywhere without a network prior): one
        forward pass gives both its ranking and its move."""
        n = len(masks)
        d = decode(obs, self.rules)
        for i, (hand, info) in enumerate(zip(d["hand"].tolist(), infosets, strict=True)):
            if hand != info.hand:  # another seat's or state's row failed inside discard_table (red team, session 48)
                raise ValueError(
                    f"search: obs row {i} is not the decision of infosets[{i}]: its hand ({hand:#x}) is not the "
                    f"infoset's ({info.hand:#x})"
                )
        rnd = obs[:, _round_slice(self.rules)].argmax(axis=1)
        late = self._late(rnd) & (int(self.opts["win_rounds"]) > 0)
        out = np.full(n, -1, np.int64)
        cands: list[list[int]] = [[] for _ in range(n)]
        nlegal = masks.sum(axis=1)
        claim = masks[:, PASS]
        for i in range(n):
            if nlegal[i] == 1:
                out[i] = int(np.flatnonzero(masks[i])[0])
            elif (masks[i, TSUMO] or masks[i, RON]) and not late[i]:
                out[i] = TSUMO if masks[i, TSUMO] else RON
            elif claim[i]:
                cands[i] = np.flatnonzero(masks[i]).tolist()
        disc = np.flatnonzero((out < 0) & ~claim)
        net_act, net_probs = np.full(n, -1, np.int64), np.zeros((n, masks.shape[1]), np.float32)
        # the rows the network ranks (discards) or, keeping its move, every row left to search
        ask = np.flatnonzero(out < 0) if self.opts["keep"] == "prior" else disc
        if self._net is not None and ask.size:
            net_act[ask], net_probs[ask] = self._net.decide(obs[ask], masks[ask])
        if disc.size:
            rows, cards, dist, accept, _ = discard_table(
                d["hand"][disc],
                d["melds"][disc, 0],
                d["unseen"][disc],
                discard_masks(masks[disc]),
                all_acceptance=True,
                one_pass=True,
            )
            P = self.rules.num_players
            total = np.zeros(len(rows), np.int64)
            for k in range(P - 1):
                total += danger(cards, d["unseen"][disc[rows]], d["discarded"][disc[rows], k + 1])
            order = np.lexsort((cards, total, -accept, dist, rows))
            if self.opts["safe"] == "model":  # the safest by the wait model's deal-in risk (agents.wary)
                total = deal_in_risk_rows([infosets[i] for i in disc.tolist()], rows, cards)
            if self._net is not None:  # the network's probabilities first, greedy's order breaking ties
                probs = net_probs[disc][rows, cards]
                rank = np.empty(len(order), np.int64)
                rank[order] = np.arange(len(order))
                order = np.lexsort((rank, -probs, rows))
            safest = np.lexsort((cards, dist, total, rows))
            for j, i in enumerate(disc.tolist()):
                mine = order[rows[order] == j]
                lst = cards[mine][: int(self.opts["cands"])].tolist()
                safe = int(cards[safest[rows[safest] == j][0]])
                if safe not in lst:
                    lst.append(safe)
                if masks[i, TSUMO]:
                    lst.insert(0, TSUMO)
                cands[i] = lst  # one discard is still searched against the bot's choice if that is another
        return out, cands, net_act

    # -- worlds and rollouts ---------------------------------------------------------------------------
    def _rng(self, info, stream: int = 0) -> np.random.Generator:
        """The decision's random stream (``stream`` 1: the extension's worlds, independent of the first)."""
        digest = sb.info_digest(info)
        words = [self.seed & 0xFFFFFFFF, self.seed >> 32 & 0xFFFFFFFF] + [
            int.from_bytes(digest[k : k + 4], "little") for k in range(0, 16, 4)
        ]
        return np.random.default_rng(words + [stream] if stream else words)

    def _worlds(self, info, record, rng: np.random.Generator, K: int) -> tuple[np.ndarray, np.ndarray]:
        if self.opts["cheat"] in (2, 3):
            return self._status_cheat_worlds(info, record, rng, K)
        if self.opts["cheat"]:  # CHEATING: the true hands, only the wall order and future seeds resampled
            base = np.asarray(record, STATE_DTYPE).reshape(1)
            out = np.repeat(base, K).copy()
            pos, end = int(base[0]["wall_pos"]), int(base[0]["wall_len"])
            for k in range(K):
                if self.opts["noise"]:
                    sb.swap_into_wall(out[k : k + 1], info, int(self.opts["noise"]), rng)
                out[k]["wall"][pos:end] = rng.permutation(out[k]["wall"][pos:end])
                out[k]["seed"] = int(rng.integers(0, 2**63))
            if self.opts["noise"]:
                refresh(out, self.rules)  # a swapped hand may open or close another seat's claim
            return out, np.ones(K)
        belief = str(self.opts["belief"])
        method = belief if belief in ("uniform", "learned") else "two_level"
        flags = {belief: True} if belief in ("no_pass", "last_discard") else {}  # belief.sample_worlds options
        worlds, weights = sb.sample_worlds(info, K, rng, self.rules, method=method, **flags)
        if self.opts["width"]:
            weights = sb.width_weights(info, worlds, weights)
        if self.opts["strat"]:
            weights = sb.stratify(info, worlds, weights)
        return worlds, weights

    def _status_cheat_worlds(self, info, record, rng: np.random.Generator, K: int) -> tuple[np.ndarray, np.ndarray]:
        """CHEATING about the status only: honest two-level worlds, kept where each opponent's ready status
        (``cheat=3``: its level, ``search_backend.level_in_worlds``: ready, within two of winning, further) is
        the true one (up to 8 rounds of 4K proposals; short of K, the worlds matching the most opponents fill
        the rest)."""
        status = sb.ready_in_worlds if self.opts["cheat"] == 2 else sb.level_in_worlds
        truth = {j: status(info, np.asarray(record, STATE_DTYPE).reshape(1), j)[0] for j in info.opponents}
        pool, score = [], []
        for _ in range(8):
            worlds, _ = sb.sample_worlds(info, 4 * K, rng, self.rules)
            hits = sum((status(info, worlds, j) == t).astype(int) for j, t in truth.items())
            pool.append(worlds)
            score.append(hits)
            if sum(int((h == len(truth)).sum()) for h in score) >= K:
                break
        worlds, hits = sb.cat_records(pool), np.concatenate(score)
        order = np.argsort(-hits, kind="stable")[:K]
        return take_records(worlds, np.sort(order)), np.ones(K)

    def _prepare(self, info, record, rng: np.random.Generator, M: int) -> tuple:
        """M worlds of one decision, ready for its candidates: (worlds, weights, seat, rollout seeds, policies)."""
        worlds, weights = self._worlds(info, record, rng, M)
        seat = int(info.seat)
        seeds = rng.integers(0, 2**63, M, dtype=np.uint64)
        pol = self._policies(seat, M, rng)
        sb.advance_to_seat(self.rules, worlds, seat, pol)  # claim windows: earlier-asked seats answer first
        return worlds, np.asarray(weights, np.float64), seat, seeds, pol

    def _policies(self, seat: int, K: int, rng: np.random.Generator) -> np.ndarray:
        P = self.rules.num_players
        pol = np.empty((K, P), np.int8)
        opp = self.opts["opp"]
        suffix = "_lite" if self.opts["lite"] else ""
        if opp == "mix":
            pol[:] = np.where(rng.random((K, P)) < 0.5, POLICY["greedy" + suffix], POLICY["defensive" + suffix])
        else:
            pol[:] = POLICY[opp + suffix]
        me = self.opts["me"]
        if names_network(me):
            pol[:, seat] = EXTERNAL_CODE
        else:
            pol[:, seat] = POLICY[me + suffix if me != "oracle" else me]
        return pol

    def _search(self, rows: list[int], cands: list[list[int]], infosets: list, records, default: list[int]) -> list:
        K = int(self.opts["worlds"])
        M = max(K, int(self.opts["screen"]))  # worlds sampled; the first K are the rollout worlds
        S = int(self.opts["stages"])  # 1..worlds (check_options)
        chunks = stage_chunks(K, S, str(self.opts["split"]))
        prep = [
            self._prepare(infosets[i], None if records is None else records[i], self._rng(infosets[i]), M) for i in rows
        ]
        ron_formula = self.opts["ron"] != "worlds"  # 4c: the candidates' risk, not the worlds, for the immediate Ron
        screened = screens(self.opts)
        alive = [list(cl) for cl in cands]
        vals = [{a: np.full(K, np.nan) for a in cl} for cl in cands]  # per-world leaf value of each candidate
        # screening (``screen`` > ``worlds``): the worlds where the candidate ends the hand at once (a Ron
        # offered on the discard, or a Tsumo) are played out in all M worlds, so that stratum's probability
        # and value come from M worlds, not K; the rollout worlds then estimate only the rest
        ends = [{a: np.zeros(M, bool) for a in cl} for cl in cands]
        end_vals = [{a: np.full(M, np.nan) for a in cl} for cl in cands]
        rons = [{a: np.zeros(M, bool) for a in cl} for cl in cands]  # the subset of ``ends``: a Ron offered
        if screened:
            self._play(prep, alive, np.arange(M), vals=None, ends=ends, end_vals=end_vals, rons=rons)
        risk = (
            [
                self._risks(infosets[i], cl, None if records is None else records[i])
                for i, cl in zip(rows, cands, strict=True)
            ]
            if ron_formula
            else None
        )
        for i, r in zip(rows, risk or [], strict=False):
            self.last_risks[i] = r
        cost = int(self.opts["ron_cost"]) / 100

        def value_of(j: int, a: int) -> float:
            w = prep[j][1]
            if risk is None or a not in risk[j]:
                return self._value(w, vals[j][a], ends[j][a], end_vals[j][a], screened)
            return _value_with_risk(w, vals[j][a], rons[j], end_vals[j], a, risk[j][a], cost)

        for s, chunk in enumerate(chunks):
            self._play(prep, alive, chunk, vals=vals, ends=ends if screened else None, end_vals=end_vals)
            if s < S - 1:
                # final=pair: the last stage is the margin rule's own comparison, so its worlds go to those two only
                pair = self.opts["final"] == "pair" and s == S - 2
                for j in range(len(alive)):
                    if len(alive[j]) > 2:
                        ranked = sorted(alive[j], key=lambda a, j=j: -value_of(j, a))
                        if pair:
                            # with menu the challenger is another action, and both keep their continuations
                            other = next((a % MENU for a in ranked if a % MENU != default[j]), default[j])
                            keep = {a for a in alive[j] if a % MENU in (default[j], other)}
                        else:
                            keep = set(ranked[: max(2, math.ceil(len(alive[j]) / 2))]) | {default[j]}
                            if all(a % MENU == default[j] for a in keep):  # menu: never the bot's action alone
                                keep.add(next(a for a in ranked if a % MENU != default[j]))
                        alive[j] = [a for a in alive[j] if a in keep]  # prior order; the bot's choice stays
        z = int(self.opts["margin"]) / 10
        value = [{a: value_of(j, a) for a in cands[j]} for j in range(len(alive))]
        per_world = [(prep[j][1][:K], vals[j]) for j in range(len(alive))]  # each decision's worlds and values
        if int(self.opts["extend"]):
            chunk = max(1, K // S)  # a default stage's worlds
            self._extend([infosets[i] for i in rows], records, rows, alive, value, per_world, default, z, chunk)
        out = []
        for j in range(len(alive)):
            w, v = per_world[j]
            best = max(alive[j], key=lambda a, j=j: value[j][a])  # first in prior order on ties
            ref = _best_of(alive[j], value[j], default[j])  # the bot's choice (with menu: its better continuation)
            if best % MENU != default[j] and z > 0:
                # common random numbers: both were rolled out on the same worlds; leave the bot's choice only
                # when the paired gain is clear of the noise (guards against the winner's curse of a max); the
                # standard error is the plain paired one over the rollout worlds (screening only lowers it)
                _, se = _paired(v[best], v[ref], w)
                if value[j][best] - value[j][ref] <= z * se:
                    best = ref
            weight = {a: float(w[: len(v[a])][~np.isnan(v[a])].sum()) for a in cands[j]}
            out.append((best, {a: (value[j][a], weight[a]) for a in cands[j]}))
        return out

    def _extend(
        self,
        infos: list,
        records,
        rows: list[int],
        alive: list,
        value: list,
        per_world: list,
        default: list[int],
        z: float,
        chunk: int,
    ) -> None:
        """``extend`` = N: more worlds where the verdict is in doubt (in place on ``alive``, ``value`` and
        ``per_world``).

        After the stages, each decision's set is (``extend_set=pair``) the continuation bot's choice and its
        challenger (the best other alive candidate), or (``alive``) every candidate still alive. While the
        verdict is in doubt, the set alone is rolled out on a fresh ``chunk`` of worlds (``worlds // stages``; from the
        decision's second random stream, so the first stays as it was), up to N worlds more; its values and the
        margin rule then read every world the set saw. In doubt: for a pair, the challenger's paired gain is
        within ``extend_z``/10 standard errors of the margin (z standard errors); for the alive set, its best
        leads its second best by less than ``extend_z``/10 standard errors. The budget goes where the verdict is
        close, not to decisions the first worlds already settle."""
        cap, t = int(self.opts["extend"]), int(self.opts["extend_z"]) / 10
        sets: dict[int, list[int]] = {}
        for j in range(len(alive)):
            others = [a for a in alive[j] if a % MENU != default[j]]  # with menu: another action, not continuation
            if default[j] not in alive[j] or not others:
                continue
            if self.opts["extend_set"] == "alive":
                sets[j] = list(alive[j])
            else:
                challenger = max(others, key=lambda a, j=j: value[j][a])  # prior order on ties
                sets[j] = [a for a in alive[j] if a % MENU in (default[j], challenger % MENU)]

        def in_doubt(j: int) -> bool:
            w, v = per_world[j]
            if self.opts["extend_set"] == "alive":
                first, second = top_two_actions(sets[j], value[j])
                if second is None:
                    return False
                gain, se = _paired(v[first], v[second], w)
                return math.isfinite(se) and gain < t * se
            challenger = max((a for a in sets[j] if a % MENU != default[j]), key=lambda a: value[j][a])
            ref = _best_of(sets[j], value[j], default[j])
            gain, se = _paired(v[challenger], v[ref], w)
            return math.isfinite(se) and abs(gain - z * se) < t * se

        rngs = {j: self._rng(infos[j], stream=1) for j in sets}
        added = 0
        while added < cap:
            doubt = [j for j in sets if in_doubt(j)]
            if not doubt:
                return
            n = min(chunk, cap - added)
            prep = [self._prepare(infos[j], None if records is None else records[rows[j]], rngs[j], n) for j in doubt]
            more = [{a: np.full(n, np.nan) for a in sets[j]} for j in doubt]
            self._play(prep, [sets[j] for j in doubt], np.arange(n), vals=more, ends=None, end_vals=None)
            for j, p, m in zip(doubt, prep, more, strict=True):
                w, v = per_world[j]
                v = dict(v) | {a: np.concatenate([v[a], m[a]]) for a in sets[j]}
                per_world[j] = (np.concatenate([w, p[1]]), v)
                alive[j] = list(sets[j])  # the verdict is the set's now
                for a in sets[j]:
                    value[j][a] = _mean(v[a], per_world[j][0])
            added += n

    def _risks(self, info, cands: list[int], record=None) -> dict[int, float]:
        """The deal-in risk of each discard candidate (4c): ``ron=model`` the wait model's
        (``agents.wary.deal_in_risk``); CHEATING, from the true ``record``: ``ron=status`` the calibrated model's with
        the true ready statuses,
        ``ron=truth`` 1 where the true record offers another seat Ron on the discard (``agents.oracle.ron_discards``)
        else 0, or with ``ron_signal`` the calibrated model moved by a noisy signal of that."""
        cards = np.array([a for a in cands if 0 <= a <= DISCARD_MAX], np.int64)
        rec = None if record is None else np.asarray(record, STATE_DTYPE).reshape(1)
        if self.opts["ron"] == "status":  # CHEATING: the true ready statuses, the model's waits, calibrated
            ready = {j: float(sb.ready_in_worlds(info, rec, j)[0]) for j in info.opponents}
            risk = deal_in_risk(info, cards, RON_SCALE, ready=ready)
        elif self.opts["ron"] == "truth":
            unsafe = int(ron_discards(self.rules, rec)[0])
            risk = np.array([unsafe >> int(c) & 1 for c in cards], np.float64)
            if self.opts["ron_signal"]:
                # a signal s ~ N(+-d'/2, 1) of each card's truth (its own stream: the worlds are the default's), and
                # the calibrated model's risk updated by its likelihood ratio exp(d' s): an honest-looking predictor
                # whose quality d' sets (d' -> infinity: the truth)
                d = int(self.opts["ron_signal"]) / 10
                sig = self._rng(info, 2).normal(d * (risk - 0.5), 1.0)
                prior = np.clip(deal_in_risk(info, cards, RON_SCALE), 1e-6, 1 - 1e-6)
                risk = 1 / (1 + np.exp(-(np.log(prior / (1 - prior)) + d * sig)))
        else:
            risk = deal_in_risk(info, cards, int(self.opts["ron_scale"]) / 100)
        return dict(zip(cards.tolist(), risk.tolist(), strict=True))

    def _play(self, prep: list, alive: list, idx: np.ndarray, vals, ends, end_vals, rons=None) -> None:
        """Step every alive candidate in worlds ``idx`` of every decision and play on to the end of the hand.

        ``vals`` None (screening): only the worlds where the hand ends at once or a Ron is offered are played
        out; ``ends`` / ``end_vals`` record them. Otherwise (a stage): the leaf values of worlds ``idx`` go to
        ``vals``; worlds that screening already played out are copied from ``end_vals`` instead of replayed
        (same world, same seed: the same outcome)."""
        P = self.rules.num_players
        recs, acts, seeds, pols, owner = [], [], [], [], []
        for j, (worlds, _, seat, sd, pol) in enumerate(prep):
            for a in alive[j]:
                sel = idx if ends is None or vals is None else idx[~ends[j][a][idx]]
                recs.append(take_records(worlds, sel))
                acts.append(np.full(len(sel), a % MENU, np.int64))
                seeds.append(sd[sel])
                p = pol[sel]
                if a >= MENU:  # the same worlds, the seat continuing as the menu's other bot
                    p = p.copy()
                    p[:, seat] = POLICY[str(self.opts["menu"]) + ("_lite" if self.opts["lite"] else "")]
                pols.append(p)
                owner.append((j, a, sel))
        batch = sb.cat_records(recs)
        act = np.concatenate(acts)
        self.rollouts += len(act)
        before = batch["scores"][:, :P].astype(np.int64).copy()
        illegal = sb.step_copies(self.rules, batch, act)
        if illegal.any():  # a sampled world where the seat's own legal action is refused: a sampler bug
            raise RuntimeError(f"search: candidate {int(act[np.flatnonzero(illegal)[0]])} refused in a sampled world")
        done = (batch["result"] != int(Result.NONE)) | (batch["phase"] == int(Phase.OVER))
        offered = np.arange(batch["claim_opts"].shape[1]) < batch["claim_n"][:, None].astype(np.int64)
        ron_bit = ((batch["claim_opts"] >> np.uint64(RON)) & np.uint64(1)).astype(bool)
        ron = (batch["phase"] == int(Phase.CLAIM)) & (ron_bit & offered).any(axis=1)
        play = ~done if vals is not None else ron & ~done
        if play.any():
            sub = take_records(batch, play)
            # one decision's stage splits too: the rollout's C threads claim records two at a time from one shared
            # counter as they finish (meld8_env.rollout), so uneven hand lengths leave no thread idle. The outcome
            # is the same whatever the threads (each record has its own seed), only the speed differs
            # (docs/search_log.md, "The default since session 14")
            threads = int(self.opts["threads"]) if len(sub) >= ROLLOUT_SPLIT_MIN else 1
            ext = None if self._me_net is None else self._me_net.act_batch
            sb.rollout_hand(
                self.rules, sub, np.concatenate(pols)[play], np.concatenate(seeds)[play], threads=threads, external=ext
            )
            put_records(batch, play, sub)
        values = self._leaf(batch, before)
        hit = done | ron
        at = 0
        for j, a, sel in owner:
            v = values[at : at + len(sel), prep[j][2]]
            if vals is None:
                h = hit[at : at + len(sel)]
                ends[j][a][sel[h]] = True
                end_vals[j][a][sel[h]] = v[h]
                if rons is not None:
                    rons[j][a][sel[ron[at : at + len(sel)]]] = True
            else:
                vals[j][a][sel] = v
                if ends is not None:
                    known = idx[ends[j][a][idx]]
                    vals[j][a][known] = end_vals[j][a][known]
            at += len(sel)

    @staticmethod
    def _value(w: np.ndarray, v: np.ndarray, end: np.ndarray, end_v: np.ndarray, screened: bool) -> float:
        """The candidate's estimated leaf value. Plain: the weighted mean over its rollout worlds. Screened:
        p * (mean over the M worlds where the hand ends at once) + (1 - p) * (mean over the rollout worlds
        where it does not), p = the weight of the ending worlds among all M (stratified sampling)."""
        K = len(v)
        if not screened:
            return _mean(v, w[:K])
        p = float(w[end].sum() / w.sum())
        rest = ~end[:K] & ~np.isnan(v)
        if p == 0.0:
            return _mean(v, w[:K])
        v_end = float(np.dot(w[end], end_v[end]) / w[end].sum())
        if not rest.any():  # every rollout world ended at once: nothing else is known
            return v_end
        return p * v_end + (1 - p) * float(np.dot(w[:K][rest], v[rest]) / w[:K][rest].sum())

    def _leaf(self, batch: np.ndarray, before: np.ndarray) -> np.ndarray:
        """(N, P) value of every seat at the end of the hand (higher is better)."""
        P = self.rules.num_players
        scores = batch["scores"][:, :P].astype(np.int64)
        if self.table is None:
            return (scores - before) / 1000.0
        return -self.table.expected(scores, batch["round"].astype(np.int64), batch["chiicha"].astype(np.int64))


def top_two_actions(cands: list[int], value: dict[int, float]) -> tuple[int, int | None]:
    """The candidates of the best two actions, each under its better continuation (with ``menu``, never two
    continuations of one action); ``None`` for the second when one action is left. Ties: the earlier candidate."""
    ranked = sorted(cands, key=lambda a: -value[a])
    second = next((a for a in ranked if a % MENU != ranked[0] % MENU), None)
    return ranked[0], second


def _best_of(alive: list[int], value: dict[int, float], action: int) -> int:
    """``action``'s candidate of the better value among its continuations still alive (without menu: itself)."""
    return max((a for a in alive if a % MENU == action), key=lambda a: value[a])


def per_action_values(vals: dict[int, tuple[float, float]]) -> dict[int, tuple[float, float]]:
    """Per-action values from per-candidate ones: with ``menu``, an action's is that of its continuation which saw
    the most world weight (one halved away saw fewer worlds than the verdict read), the better one on a tie."""
    out: dict[int, tuple[float, float]] = {}
    for a, (v, w) in vals.items():
        r = a % MENU
        if r not in out or (w, v) > out[r][::-1] or math.isnan(out[r][0]):
            out[r] = (v, w)
    return out


def _value_with_risk(w: np.ndarray, v: np.ndarray, rons: dict, end_vals: dict, a: int, r: float, cost: float) -> float:
    """``ron=model|truth``: a discard's value as r * V_ron + (1 - r) * V_rest, r the deal-in risk (the wait model's,
    or with ``ron=truth`` the true Ron offer or its noisy signal, ``_risks``).

    V_rest is the weighted mean over the rollout worlds where nobody is offered a Ron on the discard (over all
    its rollout worlds when every one of them had a Ron); V_ron the mean over the (M) worlds where someone is:
    this candidate's, else those of every candidate of the decision (a deal-in costs about the same whichever
    card it is), else V_rest - ``cost``. The worlds keep deciding what happens after the discard; only the
    chance of the immediate deal-in comes from the model (``P(ready) * q(c)``, AUC 0.80 over states, opponents
    and cards, docs/belief.md, against the worlds' 0.65 at 16 worlds; measured worse anyway, docs/search_log.md)."""
    K = len(v)
    hit = rons[a]
    rest = ~hit[:K] & ~np.isnan(v)
    if not rest.any():
        rest = ~np.isnan(v)
    v_rest = float(np.dot(w[:K][rest], v[rest]) / w[:K][rest].sum()) if rest.any() else -math.inf
    if hit.any() and w[hit].sum() > 0:
        v_ron = float(np.dot(w[hit], end_vals[a][hit]) / w[hit].sum())
    else:
        pool_w = np.concatenate([w[h] for h in rons.values()])
        pool_v = np.concatenate([end_vals[b][h] for b, h in rons.items()])
        v_ron = float(np.dot(pool_w, pool_v) / pool_w.sum()) if pool_w.size and pool_w.sum() > 0 else v_rest - cost
    return r * v_ron + (1 - r) * v_rest


def stage_chunks(K: int, S: int, split: str = "equal") -> list[np.ndarray]:
    """The world indices of each successive-halving stage: ``equal`` chunks, or ``double`` (chunk s about 2**s
    times the first: sequential halving's budget, where the few candidates left late get most of the worlds;
    every chunk at least one world). Together they are 0..K-1 in order."""
    if split == "equal":
        return np.array_split(np.arange(K), S)
    # the end of stage s is K * (2**(s+1) - 1) / (2**S - 1), rounded; exact integers (floats overflow at S >= 1024)
    total = (1 << S) - 1
    ends = np.array([(2 * K * ((1 << (s + 1)) - 1) + total) // (2 * total) for s in range(S)], np.int64)
    ends = np.minimum(np.maximum(ends, np.arange(1, S + 1)), K - np.arange(S - 1, -1, -1))
    return np.split(np.arange(K), ends[:-1])


def _mean(v: np.ndarray, w: np.ndarray) -> float:
    """Weighted mean over the worlds where ``v`` was rolled out (-inf when none)."""
    ok = ~np.isnan(v)
    return float(np.dot(w[ok], v[ok]) / w[ok].sum()) if ok.any() and w[ok].sum() > 0 else -math.inf


def _paired(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted mean of a - b over the worlds both saw, and its standard error."""
    ok = ~np.isnan(a) & ~np.isnan(b)
    if ok.sum() < 2:
        return 0.0, math.inf
    d, ww = a[ok] - b[ok], w[ok] / w[ok].sum()
    mean = float(np.dot(ww, d))
    n_eff = 1.0 / float(np.dot(ww, ww))
    var = float(np.dot(ww, (d - mean) ** 2)) * n_eff / max(n_eff - 1.0, 1.0)
    return mean, math.sqrt(var / n_eff)


def _round_slice(rules: RuleConfig) -> slice:
    from meld8_env.observation import layout

    off, size = layout(rules)["round"]
    return slice(off, off + size)


def load_search(options: str, rules: RuleConfig, seed: int) -> SearchAgent:
    """The agent of spec ``search`` / ``search:k=v,...`` (ValueError in one line on a bad option)."""
    if not isinstance(options, str):  # an int raised AttributeError from the parser (session 48b)
        raise TypeError(f"search options must be a string (k=v,k=v), got {type(options).__name__}")
    return SearchAgent(rules=rules, seed=seed, **parse_options(options))
