"""The text picture of a game (`qwixx_env.envs.render`, ``render_mode="ansi"``) and the terminal
game's colours (`play.terminal.colorize`), for a sheet that is not the classic one: every row by
its name, and in a row whose cells mix colours each cell's colour after its number."""

from __future__ import annotations

from qwixx_env.core.variant import CLASSIC, Row, Variant, register_variant
from qwixx_env.envs import qwixx_v0
from qwixx_env.envs.render import color_tags, render_text, short_names, tagged_rows
from qwixx_env.play.terminal import colorize

UP = tuple(range(2, 13))
CYCLE = ("red", "yellow", "purple")
# three rows: top and middle mix three colours of dice, bottom is all purple (a colour named
# other than its row); the dice are red, yellow and purple, in the order the cells first show them
TRIO = register_variant(Variant(
    name="render_trio", faces=6, lock_cells=1, lock_threshold=5, score_table=tuple(k * (k + 1) // 2 for k in range(13)),
    rows=(
        Row("top", UP, colors=tuple(CYCLE[i % 3] for i in range(11))),
        Row("middle", UP[::-1], colors=tuple(CYCLE[(i + 1) % 3] for i in range(11))),
        Row("bottom", UP, colors=("purple",) * 11),
    ),
))


def snapshot(**over):
    snap = {
        "roll": 4, "active_player": 0, "phase": "color",
        "dice": {"white": [3, 4], "red": 2, "yellow": 6, "purple": 1},
        "locked_rows": [],
        "players": [{"marks": {"top": [2, 4], "middle": [10], "bottom": []}, "locks": [], "penalties": 1,
                     "lucky_numbers": [], "score": 1}],
    }
    return {**snap, **over}


def test_short_names_are_the_shortest_beginnings_that_tell_names_apart():
    assert short_names(("red", "yellow", "green", "blue")) == {"red": "r", "yellow": "y", "green": "g", "blue": "b"}
    assert short_names(("blue", "black", "red")) == {"blue": "blu", "black": "bla", "red": "r"}
    assert short_names(("red", "reddish")) == {"red": "red", "reddish": "redd"}


def test_a_mixed_row_shows_each_cells_colour_after_its_number():
    assert tagged_rows(TRIO) == (True, True, True) and tagged_rows(CLASSIC) == (False,) * 4
    assert color_tags(TRIO) == {"red": "r", "yellow": "y", "purple": "p"}
    text = render_text(TRIO, snapshot(), ["player_0"], "player_0")
    assert text.split("\n") == [
        "Qwixx (render_trio) | roll 5 | active: player_0 | colour action | to decide: player_0",
        "Dice: white 3 4 (sum 7) | red 2 | yellow 6 | purple 1",
        "[n] crossed   n open   - skipped (lost)   [L] lock crossed   L lock open   # row locked",
        "Cell colours (the die a cell is crossed with): nr red   ny yellow   np purple",
        "",
        "player_0 (active)   score 1   penalties [X][ ][ ][ ]",
        # top's cells are crossed with the red, yellow, purple, red, ... dice (2r: the red die's 2)
        "  top     [2r]    - [4p]   5r   6y   7p   8r   9y  10p  11r  12y    L",
        # middle runs 12 down to 2, starting at yellow
        "  middle     -    -[10r]   9y   8p   7r   6y   5p   4r   3y   2p    L",
        "  bottom    2p   3p   4p   5p   6p   7p   8p   9p  10p  11p  12p    L",
        "",
    ]


def test_a_locked_row_and_a_die_out_of_play_are_drawn_by_the_rows_name():
    snap = snapshot(locked_rows=["bottom"], dice={"white": [1, 1], "red": 5, "yellow": 5, "purple": None})
    snap["players"][0]["marks"]["bottom"] = [2, 3, 4, 5, 6, 12]
    snap["players"][0]["locks"] = ["bottom"]
    text = render_text(TRIO, snap, ["player_0"], None)
    assert "| purple -" in text
    assert "  bottom  [2p] [3p] [4p] [5p] [6p]    -    -    -    -    -[12p]  [L]" in text


def test_the_env_renders_a_three_row_game_by_its_row_names():
    game = qwixx_v0.raw_env(num_players=2, variant=TRIO, render_mode="ansi")
    game.reset(seed=3)
    text = game.render()
    rows = [line.split()[0] for line in text.split("\n") if line.startswith("  ")]
    assert rows == ["top", "middle", "bottom"] * 2
    assert "Dice: white" in text and "| red " in text and "| purple " in text and "blue" not in text


def test_the_terminal_paints_a_mixed_rows_cells_each_in_its_own_colour():
    text = render_text(TRIO, snapshot(), ["player_0"], "player_0")
    drawn = colorize(text, TRIO).split("\n")
    top = drawn[6]
    assert top.startswith("  top ")  # the name in the terminal's own colour
    assert "\033[31m\033[7m[2r]\033[27m\033[0m" in top  # crossed red 2: red, in reverse video
    assert "\033[33m6y\033[0m" in top and "\033[35m7p\033[0m" in top  # yellow 6, purple 7
    assert drawn[:6] == text.split("\n")[:6]  # the lines that are not rows are as they were
    classic = colorize("  red       [2]   3  L\nplayer_0")
    assert classic == "\033[31m  red       \033[7m[2]\033[27m   3  L\033[0m\nplayer_0"
