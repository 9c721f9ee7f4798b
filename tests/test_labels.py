"""The short option labels of the terminal game and the play page (`qwixx_env.play.labels`)."""

from __future__ import annotations

import pytest

from qwixx_env import CLASSIC, LONGO, decode_action
from qwixx_env.core.variant import get_variant
from qwixx_env.play.labels import action_label, action_text, parse_label


@pytest.mark.parametrize("variant", [CLASSIC, LONGO, get_variant("longo", "instead")],
                         ids=lambda v: v.lucky_rule or v.name)
def test_every_action_has_one_label_that_reads_back(variant):
    labels = [action_label(a, variant) for a in range(variant.num_actions)]
    assert len(set(labels)) == variant.num_actions
    for action, label in enumerate(labels):
        assert parse_label(label, variant) == action
        assert parse_label(label.upper(), variant) == action
        mark = decode_action(action, variant)
        if mark is None:
            assert label == "p" and action_text(action, variant) == "pass"
        else:
            color, number = mark
            assert label == f"{color[0]}{number}"
            assert parse_label(f"{color} {number}", variant) == action  # the row's full name too
            assert action_text(action, variant) == f"cross {color} {number}"


def test_labels_name_the_number_on_the_sheet():
    #  red    2 3 4 5 6 7 8 9 10 11 12     green 12 11 10 9 8 7 6 5 4 3 2
    assert action_label(0, "classic") == "r2"
    assert action_label(10, "classic") == "r12"
    assert action_label(22, "classic") == "g12"
    assert action_label(43, "classic") == "b2"
    assert action_label(44, "classic") == "p"
    assert action_label(4 * 15 - 1, "longo") == "b2" and action_label(60, "longo") == "p"
    assert parse_label(" Pass ", "classic") == 44
    assert parse_label("y 16", "longo") == 15 + 14


@pytest.mark.parametrize(
    "text, variant",
    [("r13", "classic"), ("r1", "classic"), ("x7", "classic"), ("", "classic"), ("r7x", "classic"),
     ("r", "classic"), ("17", "longo"), ("g17", "longo"), ("r٣", "classic"), ("purple 3", "classic")],
)
def test_what_is_not_a_label_is_refused_saying_what_is_accepted(text, variant):
    with pytest.raises(ValueError, match=r"label: got .*expected a row letter \(r, y, g, b\).*'p' to pass"):
        parse_label(text, variant)


def test_an_action_outside_the_space_is_refused():
    with pytest.raises(ValueError, match="action: got 45"):
        action_label(45, "classic")
