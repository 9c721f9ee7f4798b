"""Short labels for actions, shared by the terminal game and the play page: ``r7``, ``g12``, ``p``.

Every action of a variant has one label: the row's letter and the number the cell shows, or
``p`` for pass. A row's letter is the shortest beginning of its name that begins no other row's
name (`row_letters`: ``r`` red, ``y`` yellow, ``g`` green, ``b`` blue in classic; ``t``, ``m``,
``b`` for rows named top, middle and bottom); where it ends in a digit, a ``-`` keeps it apart
from the number. The action space has nothing else: Longo's lucky cross (a tie between rows, or
``lucky="instead"``) is chosen by the cell it crosses, the next number of a qualifying row, so
it is labelled like any cross.

>>> from qwixx_env.play.labels import action_label, parse_label
>>> action_label(6, "classic"), action_label(44, "classic")
('r8', 'p')
>>> parse_label("G12", "classic"), parse_label("green 12", "classic"), parse_label("pass", "classic")
(22, 22, 44)

`parse_label` reads what a person types: the label in any case, with or without a space, the
row's full name (``red 7``), or ``pass``; anything else is a `ValueError` saying what is
accepted. `action_text` is the long form for lists (``cross red 7``, ``pass``).
"""

from __future__ import annotations

from qwixx_env.core.variant import Variant, decode_action, encode_action, get_variant
from qwixx_env.envs.render import short_names

PASS_LABEL = "p"
_PASS_WORDS = ("p", "pass")


def row_letters(variant: str | Variant = "classic") -> dict[str, str]:
    """The label's letter of each row, by row name: the shortest beginning of its name that
    begins no other row's name (``{"red": "r", "yellow": "y", "green": "g", "blue": "b"}``)."""
    return short_names(get_variant(variant).row_names)


def action_label(action: int, variant: str | Variant = "classic") -> str:
    """The short label of an action: ``"r7"`` (row letter + number) or ``"p"`` (pass).
    Raises `ValueError` for an index outside the variant's action space."""
    mark = decode_action(action, variant)
    if mark is None:
        return PASS_LABEL
    row, number = mark
    return _label(row_letters(variant)[row], number)


def _label(letter: str, number: int) -> str:
    return f"{letter}{'-' if letter[-1].isdigit() else ''}{number}"


def action_text(action: int, variant: str | Variant = "classic") -> str:
    """The long form of an action for a list of options: ``"cross red 7"`` or ``"pass"``."""
    mark = decode_action(action, variant)
    return "pass" if mark is None else f"cross {mark[0]} {mark[1]}"


def parse_label(text: str, variant: str | Variant = "classic") -> int:
    """The action a typed label names (see the module docstring); whether it is legal now is
    the caller's question. Raises `ValueError` naming the text and what is accepted."""
    v = get_variant(variant)
    words = str(text).strip().lower()
    if words in _PASS_WORDS:
        return v.pass_action
    squeezed = words.replace(" ", "")
    letters = row_letters(v)
    # a row's full name before any letter, the longest first: "green 9" is not row g's "reen9"
    names = sorted({(w, row) for row in v.row_names for w in (row, letters[row])}, key=lambda x: -len(x[0]))
    for word, row in names:
        if squeezed.startswith(word.lower()):
            digits = squeezed[len(word):].removeprefix("-")
            if digits.isdigit() and digits.isascii() and int(digits) in v.row_numbers[v.row_names.index(row)]:
                return encode_action((row, int(digits)), v)
    first, other = 0, max(0, v.num_rows - 2)  # classic's examples: red 7 as a label, green 9 by name
    raise ValueError(
        f"label: got {text!r}; expected a row letter ({', '.join(letters.values())}) or name and a number from "
        f"{v.numbers[0]} to {v.numbers[-1]}, e.g. '{_label(letters[v.row_names[first]], _example(v, first, 7))}' "
        f"or '{v.row_names[other]} {_example(v, other, 9)}', or 'p' to pass"
    )


def _example(v: Variant, r: int, number: int) -> int:
    """`number` where row `r` has it, else the row's first number: a number for an example."""
    return number if number in v.row_numbers[r] else v.row_numbers[r][0]
