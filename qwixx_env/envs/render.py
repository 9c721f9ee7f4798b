"""A plain-text picture of a game: every sheet, the dice, and whose decision it is."""

from __future__ import annotations

from typing import Any

from qwixx_env.core.variant import COLORS, Variant

RENDER_MODES = (None, "ansi", "human")
"""The render modes the AEC and Parallel envs take: none, the sheets as text, text printed."""

LEGEND = "[n] crossed   n open   - skipped (lost)   [L] lock crossed   L lock open   # row locked"


def _row_text(variant: Variant, r: int, crossed: list[int], has_lock: bool, row_is_locked: bool) -> str:
    numbers = variant.row_numbers[r]
    last = max((numbers.index(n) for n in crossed), default=-1)
    cells = []
    for i, n in enumerate(numbers):
        if n in crossed:
            cells.append(f"[{n}]".rjust(4))
        elif i < last or row_is_locked:
            cells.append("-".rjust(4))
        else:
            cells.append(str(n).rjust(4))
    lock = "[L]" if has_lock else ("#" if row_is_locked else "L")
    return f"  {COLORS[r]:<7}" + "".join(cells) + f"  {lock:>3}"


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
    parts += [f"{c} {dice[c] if dice[c] is not None else '-'}" for c in COLORS]
    lines = [head, "Dice: " + " | ".join(parts), LEGEND, ""]
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
        for r, color in enumerate(COLORS):
            lines.append(
                _row_text(
                    variant,
                    r,
                    player["marks"][color],
                    color in player["locks"],
                    color in snap["locked_rows"],
                )
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
