"""§12: the rule config — defaults, YAML loading, validation, stable hash."""

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
    ],
)
def test_bad_values_are_clear_errors(changes, message):
    with pytest.raises(RuleConfigError, match=message):
        RuleConfig.from_dict(changes)


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
