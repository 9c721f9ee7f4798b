"""The short option labels of the terminal game and the play page (`qwixx_env.play.labels`)."""

from __future__ import annotations

import pytest

from qwixx_env import CLASSIC, LONGO, decode_action
from qwixx_env.core.variant import Row, Variant, get_variant
from qwixx_env.play.labels import action_label, action_text, parse_label, row_letters

UP = tuple(range(2, 13))
SCORES = tuple(k * (k + 1) // 2 for k in range(13))
# three rows of mixed colours, named for where they are on the sheet
TRIO = Variant(name="labels_trio", faces=6, lock_cells=1, lock_threshold=5, score_table=SCORES, rows=(
    Row("top", UP, colors=("red", "yellow") * 5 + ("red",)), Row("middle", UP[::-1], colors=("yellow",) * 11),
    Row("bottom", UP[:5] + UP[6:] + (7,), colors=("red",) * 11)))
# rows whose names share their first letters, and names that end in a digit
KIN = Variant(name="labels_kin", faces=6, lock_cells=1, lock_threshold=5, score_table=SCORES,
              rows=(Row("blue", UP), Row("black", UP), Row("row1", UP[::-1]), Row("row2", UP[::-1])))


@pytest.mark.parametrize("variant", [CLASSIC, LONGO, get_variant("longo", "instead"), TRIO, KIN],
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
            letter = row_letters(variant)[color]
            assert label == f"{letter}{'-' if letter[-1].isdigit() else ''}{number}"
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


def test_a_rows_letter_is_the_shortest_beginning_of_its_name_no_other_row_shares():
    assert row_letters(CLASSIC) == {"red": "r", "yellow": "y", "green": "g", "blue": "b"}
    assert row_letters(TRIO) == {"top": "t", "middle": "m", "bottom": "b"}
    assert row_letters(KIN) == {"blue": "blu", "black": "bla", "row1": "row1", "row2": "row2"}
    # bottom  2 3 4 5 6 8 9 10 11 12 7: its last cell is 7
    assert action_label(0, TRIO) == "t2" and action_label(32, TRIO) == "b7" and action_label(33, TRIO) == "p"
    assert action_label(22, KIN) == "row1-12" and parse_label("row1 12", KIN) == parse_label("ROW1-12", KIN) == 22
    assert parse_label("bla3", KIN) == 12


@pytest.mark.parametrize("text", ["r7", "t1", "b13", "top 13", "middle", "bl7", "x"])
def test_what_is_not_a_label_of_a_three_row_sheet_is_refused_naming_its_rows(text):
    variant = KIN if text == "bl7" else TRIO
    letters = "blu, bla, row1, row2" if variant is KIN else "t, m, b"
    with pytest.raises(ValueError, match=rf"label: got .*expected a row letter \({letters}\).*'p' to pass"):
        parse_label(text, variant)


def test_an_action_outside_the_space_is_refused():
    with pytest.raises(ValueError, match="action: got 45"):
        action_label(45, "classic")
