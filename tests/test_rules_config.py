"""§12: the rule config — defaults, YAML loading, validation, stable hash."""

import re
from pathlib import Path

import pytest

from meld8_env.rules import RuleConfig, RuleConfigError

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "rules"


def test_defaults_match_rules_md():
    r = RuleConfig()
    assert (r.num_players, r.rounds, r.starting_score) == (3, 6, 30_000)
    assert r.min_yaku_han == (1, 1, 1, 2, 2, 2)  # R30
    assert r.placement_points == (20_000, 0, -20_000)  # R40
    assert r.yakuman_value == 20_000 and r.points_per_han == 2_000  # R37
    assert r.wall_size == 32 and not r.penalty_mode  # R10, R43


def test_default_yaml_equals_defaults():
    assert RuleConfig.from_yaml(CONFIGS / "default.yaml") == RuleConfig()


def test_R44_two_player_yaml():
    r = RuleConfig.from_yaml(CONFIGS / "two_player.yaml")
    assert r == RuleConfig.two_player()
    assert (r.num_players, r.rounds, r.wall_size, r.wall_limit) == (2, 4, 39, 7)


def test_rules_hash_is_stable_and_sensitive():
    assert RuleConfig().rules_hash == RuleConfig().rules_hash
    assert RuleConfig().rules_hash != RuleConfig(value_triplet_han=2).rules_hash
    assert len(RuleConfig().rules_hash) == 16


def test_unknown_key_is_an_error_listing_known_keys():
    with pytest.raises(RuleConfigError, match=r"unknown rule option 'num_player'.*num_players"):
        RuleConfig.from_dict({"num_player": 3})


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"num_players": 4}, "'num_players': 4 \\(allowed: 2 or 3\\)"),
        ({"kuikae": "maybe"}, "allowed: other_end \\| off"),
        ({"placement_points": [10, 0, 0]}, "must sum to 0"),
        ({"rounds": 4}, "'min_yaku_han' has 6 entries but 'rounds' is 4"),
        ({"starting_dealer": 3}, "'draw' or a seat 0..2"),
        ({"value_triplet_han": 0}, "integer >= 1"),
        ({"penalty_mode": "yes"}, "true or false"),
        ({"num_players": 3.0}, "'num_players': 3.0 \\(allowed: 2 or 3\\)"),  # red team: passed, then failed deep inside
        ({"kuikae": "x" * 10_000}, "'xxxx.*\\.\\.\\. \\(allowed"),  # the value is cut: the error stays one short line
    ],
)
def test_bad_values_are_clear_errors(changes, message):
    with pytest.raises(RuleConfigError, match=message):
        RuleConfig.from_dict(changes)


def test_numpy_integers_are_integers_and_stored_as_int():
    """A config built from numpy values (a sweep's np.arange, an array's items) equals the one built from ints, hashes
    the same and writes JSON; numpy floats and bools stay refused like their Python kin."""
    import json

    import numpy as np

    r = RuleConfig(
        rounds=np.int64(4), min_yaku_han=list(np.array([1, 1, 2, 2])), placement_points=tuple(np.array([30, 0, -30]))
    )
    plain = RuleConfig(rounds=4, min_yaku_han=[1, 1, 2, 2], placement_points=[30, 0, -30])
    assert r == plain and r.rules_hash == plain.rules_hash and type(r.rounds) is int
    assert all(type(v) is int for v in r.min_yaku_han)
    json.dumps(r.to_dict())
    assert RuleConfig().replace(starting_dealer=np.int8(1)).starting_dealer == 1
    for bad in (np.float64(6), np.bool_(True)):
        with pytest.raises(RuleConfigError, match="'rounds'.*allowed: an integer 1..16"):
            RuleConfig(rounds=bad)


def test_replace_validates():
    assert RuleConfig().replace(starting_dealer=1).starting_dealer == 1
    with pytest.raises(RuleConfigError):
        RuleConfig().replace(wall_limit=40)


def test_yaml_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kuikae: [unclosed\n")
    with pytest.raises(RuleConfigError, match="not valid YAML"):
        RuleConfig.from_yaml(bad)
    with pytest.raises(RuleConfigError, match="not found"):
        RuleConfig.from_yaml(tmp_path / "missing.yaml")


def test_documented_kuikae_off_reads_as_the_word_off(tmp_path):
    # docs/rules.md writes `kuikae: off`; YAML 1.1 read it as False and the option refused it
    f = tmp_path / "r.yaml"
    f.write_text("kuikae: off\npenalty_mode: true\n")
    r = RuleConfig.from_yaml(f)
    assert r.kuikae == "off" and r.penalty_mode is True


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: &x [1, 2]\nplacement_points: *x\n", "line 2: an alias"),  # aliases nest into gigabytes: refused
        ("kuikae: off\nkuikae: other_end\n", "line 2: the key 'kuikae' is given twice"),
        ("[]\n", "expected a mapping of options .*got list"),  # used to mean the default rules, silently
        ("false\n", "expected a mapping of options .*got bool"),
        ("0\n", "expected a mapping of options .*got int"),
        ("rounds: " + "9" * 5000 + "\n", "a value that cannot be read \\(Exceeds the limit"),
        ("rounds: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply|not valid YAML"),
        ("!!python/object/apply:os.system [echo]\n", "line 1: not valid YAML"),
        ("<<: {rounds: 6}\nkuikae: off\n", "line 1: a merge key"),
        # YAML 1.1 numbers that are not what they look like (red team, session 35): 030000 was 12288 (octal), 1:30
        # was 90 (base 60), and the rules took them
        ("starting_score: 030000\n", "line 1: '030000' is not a decimal number"),
        ("kuikae: off\nplacement_points: [020000, 0, -020000]\n", "line 2: '020000' is not a decimal number"),
        ("starting_score: 1:30\n", "line 1: '1:30' is not a decimal number"),
        ("rounds: 0x6\n", "line 1: '0x6' is not a decimal number"),
    ],
)
def test_rule_files_that_yaml_would_misread_are_refused_in_one_line(tmp_path, text, message):
    f = tmp_path / "r.yaml"
    f.write_text(text)
    with pytest.raises(RuleConfigError, match=message) as err:
        RuleConfig.from_yaml(f)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300 and str(f) in str(err.value)


def test_an_empty_rule_file_is_the_defaults_and_non_utf8_is_named(tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text("")
    assert RuleConfig.from_yaml(f) == RuleConfig()
    f.write_bytes(b"rounds: \xff\xfe\n")
    with pytest.raises(RuleConfigError, match=f"{f}: not UTF-8 text"):
        RuleConfig.from_yaml(f)


def test_yaml_numbers_are_decimal_as_yaml_1_2_reads_them():
    """Decimal integers (digit groups with _), decimal floats with a dot or an exponent, .inf / .nan; nothing else
    is a number (a quoted 030000 stays text, for a name or a path)."""
    from meld8_env.config_io import load_yaml_text

    text = "a: 30000\nb: -5\nc: 1_000\nd: 1.5\ne: 3e-4\nf: .5\ng: '030000'\nh: search:worlds=16\ni: 10:ab\n"
    assert load_yaml_text(text) == {"a": 30000, "b": -5, "c": 1000, "d": 1.5, "e": 3e-4, "f": 0.5, "g": "030000",
                                    "h": "search:worlds=16", "i": "10:ab"}  # fmt: skip


def test_a_folder_given_as_a_rule_file_is_named_as_such(tmp_path):
    """It said "rule config file not found" for a folder that exists (red team, session 35)."""
    with pytest.raises(RuleConfigError, match=f"{tmp_path} is not a file \\(a folder, FIFO or device\\)"):
        RuleConfig.from_yaml(tmp_path)


@pytest.mark.parametrize(
    "text, says",
    [
        ("num_player: 3\n", r"unknown rule option 'num_player'"),
        ("wall_limit: 40\n", "wall_limit"),
        ("base: two_player\nrounds: x\n", "rounds"),
    ],
)
def test_an_option_a_rule_file_gets_wrong_is_named_with_the_file(tmp_path, text, says):
    """Found in session 35, fixed in 36: "unknown rule option 'num_player'" did not say which file held it (a
    tournament or train config names one rule file among several)."""
    f = tmp_path / "house.yaml"
    f.write_text(text)
    with pytest.raises(RuleConfigError) as err:
        RuleConfig.from_yaml(f)
    msg = str(err.value)
    assert msg.startswith(f"{f}: ") and re.search(says, msg) and "\n" not in msg, msg


def test_more_rounds_than_the_engine_holds_are_refused_where_the_rules_load(tmp_path):
    """Red team, session 43: rounds 17..~50,000 loaded, then every command failed in the engine's words ("the fast
    engine supports at most 16 rounds"), naming neither the file nor the option, after a tournament had made its
    lock and log files."""
    from meld8_app.cli import main

    assert RuleConfig(rounds=16, min_yaku_han=[1] * 16).rounds == 16
    with pytest.raises(RuleConfigError, match=r"bad value for rule option 'rounds': 17 \(allowed: an integer 1..16\)"):
        RuleConfig(rounds=17, min_yaku_han=[1] * 17)
    path = tmp_path / "long.yaml"
    path.write_text("rounds: 20\nmin_yaku_han: [" + ", ".join(["1"] * 20) + "]\n")
    out = tmp_path / "out"
    assert main(["tournament", "--agents", "greedy,greedy,random", "--boards", "1", "--rules", str(path),
                 "--out", str(out)]) == 2  # fmt: skip
    assert not out.exists()
