"""A plain-text picture of a game: every sheet, the dice, and whose decision it is.

Each row is drawn by its name with its numbers, as the variant's sheet prints them. A row
whose cells are crossed with dice of other colours than its name (a mixed row, or a row named
other than its colour) shows each cell's colour as a tag after the number (``7r``: crossed with
the red die), the tags spelled out under the legend (`color_tags`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qwixx_env.core.variant import Variant

RENDER_MODES = (None, "ansi", "human")
"""The render modes the AEC and Parallel envs take: none, the sheets as text, text printed."""

LEGEND = "[n] crossed   n open   - skipped (lost)   [L] lock crossed   L lock open   # row locked"


def short_names(names: Sequence[str]) -> dict[str, str]:
    """Each name's shortest beginning that begins no other of `names` (the whole name where
    there is none): ``r, y, g, b`` for the classic rows, ``blu`` and ``bla`` for blue and black."""
    out = {}
    for name in names:
        others = [n for n in names if n != name]
        out[name] = next((name[:k] for k in range(1, len(name)) if not any(o.startswith(name[:k]) for o in others)),
                         name)
    return out


def tagged_rows(variant: Variant) -> tuple[bool, ...]:
    """Per row, whether its cells show their colours: some cell is crossed with a die whose
    colour is not the row's name."""
    return tuple(any(c != row.name for c in row.colors) for row in variant.rows)


def color_tags(variant: Variant) -> dict[str, str]:
    """The tag of each coloured die's colour, as cells of a tagged row show it: its shortest
    beginning that begins no other colour (``r`` red)."""
    return short_names(variant.dice_colors)


def _row_text(variant: Variant, r: int, crossed: list[int], has_lock: bool, row_is_locked: bool) -> str:
    numbers = variant.row_numbers[r]
    last = max((numbers.index(n) for n in crossed), default=-1)
    tags = color_tags(variant)
    tagged = tagged_rows(variant)
    # every row's cells as wide as the widest tagged cell, so that the columns line up
    width = 4 + max((len(tags[c]) for t, row in zip(tagged, variant.rows) if t for c in row.colors), default=0)
    name_width = max(7, 1 + max(len(n) for n in variant.row_names))
    cells = []
    for i, n in enumerate(numbers):
        shown = f"{n}{tags[variant.rows[r].colors[i]]}" if tagged[r] else str(n)
        if n in crossed:
            cells.append(f"[{shown}]".rjust(width))
        elif i < last or row_is_locked:
            cells.append("-".rjust(width))
        else:
            cells.append(shown.rjust(width))
    lock = "[L]" if has_lock else ("#" if row_is_locked else "L")
    return f"  {variant.row_names[r]:<{name_width}}" + "".join(cells) + f"  {lock:>3}"


def render_text(variant: Variant, snap: dict[str, Any], agents: list[str], to_decide: str | None) -> str:
    """The ansi render: header, dice, then each sheet with its score and penalties."""
    phase_words = {
        "white": "white action",
        "lucky": "lucky cross tie",
        "color": "colour action",
        "over": "game over",
    }
    active = agents[snap["active_player"]]
    head = (
        f"Qwixx ({variant.name}) | roll {snap['roll'] + 1} | active: {active} | "
        f"{phase_words[snap['phase']]}"
    )
    if to_decide is not None and snap["phase"] != "over":
        head += f" | to decide: {to_decide}"
    dice = snap["dice"]
    w1, w2 = dice["white"]
    parts = [f"white {w1} {w2} (sum {w1 + w2})"]
    parts += [f"{c} {dice[c] if dice[c] is not None else '-'}" for c in variant.dice_colors]
    lines = [head, "Dice: " + " | ".join(parts), LEGEND]
    if any(tagged_rows(variant)):
        names = color_tags(variant)
        lines.append("Cell colours (the die a cell is crossed with): "
                     + "   ".join(f"n{names[c]} {c}" for c in variant.dice_colors))
    lines.append("")
    scores = [p["score"] for p in snap["players"]]
    for seat, player in enumerate(snap["players"]):
        tags = []
        if seat == snap["active_player"]:
            tags.append("active")
        if snap["phase"] == "over" and scores[seat] == max(scores):
            tags.append("winner" if scores.count(max(scores)) == 1 else "shares the win")
        boxes = "".join("[X]" if i < player["penalties"] else "[ ]" for i in range(variant.max_penalties))
        title = f"{agents[seat]}" + (f" ({', '.join(tags)})" if tags else "")
        extra = f"   lucky {player['lucky_numbers']}" if player["lucky_numbers"] else ""
        lines.append(f"{title}   score {player['score']}   penalties {boxes}{extra}")
        for r, row in enumerate(variant.row_names):
            lines.append(
                _row_text(
                    variant,
                    r,
                    player["marks"][row],
                    row in player["locks"],
                    row in snap["locked_rows"],
                )
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
