"""Short labels for actions, shared by the terminal game and the play page: ``r7``, ``g12``, ``p``.

Every action of a variant has one label: the row's letter (``r`` red, ``y`` yellow, ``g``
green, ``b`` blue) and the number the cell shows, or ``p`` for pass. The action space has
nothing else: Longo's lucky cross (a tie between rows, or ``lucky="instead"``) is chosen by the
cell it crosses, the next number of a qualifying row, so it is labelled like any cross.

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

from qwixx_env.core.variant import COLORS, Variant, decode_action, encode_action, get_variant

ROW_LETTERS = {"r": "red", "y": "yellow", "g": "green", "b": "blue"}
"""The label's letter of each row."""

PASS_LABEL = "p"
_PASS_WORDS = ("p", "pass")


def action_label(action: int, variant: str | Variant = "classic") -> str:
    """The short label of an action: ``"r7"`` (row letter + number) or ``"p"`` (pass).
    Raises `ValueError` for an index outside the variant's action space."""
    mark = decode_action(action, variant)
    if mark is None:
        return PASS_LABEL
    color, number = mark
    return f"{color[0]}{number}"


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
    name = next((c for c in sorted(COLORS, key=len, reverse=True) if squeezed.startswith(c)), None)
    if name is None and squeezed[:1] in ROW_LETTERS:
        name = ROW_LETTERS[squeezed[0]]
    if name is not None:
        digits = squeezed[len(name):] if squeezed.startswith(name) else squeezed[1:]
        if digits.isdigit() and digits.isascii() and int(digits) in v.numbers:
            return encode_action((name, int(digits)), v)
    raise ValueError(
        f"label: got {text!r}; expected a row letter (r, y, g, b) or name and a number from "
        f"{v.numbers[0]} to {v.numbers[-1]}, e.g. 'r7' or 'green 9', or 'p' to pass"
    )
