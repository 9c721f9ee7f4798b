"""Properties of random legal play, checked against the rules written out again here.

Hypothesis draws the options (variant, players, lucky rule and numbers, start player, reward),
a seed and a stream of choices among the legal actions; `play` runs the game on the raw env
and keeps every decision with the snapshots around it. Each test states one rule and checks it
on every step of the game, using only the snapshot, the dice and this file's own reading of
/work/shared/RULES.md (never the package's rule tables).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qwixx_env import qwixx_v0, replay

COLORS = ("red", "yellow", "green", "blue")
CELLS = {"classic": 11, "longo": 15}  # numbers per row
LOCK_CELLS = {"classic": 1, "longo": 2}  # the last numbers of a row that lock it
LOCK_THRESHOLD = {"classic": 5, "longo": 6}  # crosses a row needs before a lock cell
MAX_PENALTIES = 4
PENALTY_POINTS = 5

SETTINGS = settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

pytestmark = pytest.mark.slow  # every test plays 150 drawn games


# --- the rules, written out again -------------------------------------------------------------


def printed(variant: str) -> list[list[int]]:
    up = list(range(2, CELLS[variant] + 2))
    return [up, up, up[::-1], up[::-1]]


def pass_action(variant: str) -> int:
    return 4 * CELLS[variant]


def row_cells(variant: str, player: dict, r: int) -> list[int]:
    """Cells (sheet positions) crossed in row r of a snapshot player, in sheet order."""
    return [printed(variant)[r].index(n) for n in player["marks"][COLORS[r]]]


def crossed_actions(variant: str, player: dict) -> set[int]:
    K = CELLS[variant]
    return {r * K + c for r in range(4) for c in row_cells(variant, player, r)}


def may_cross(variant: str, cells: list[int], c: int) -> bool:
    """Rules 4 and 5 (Longo 3): right of every cross; a lock cell only past the threshold."""
    if cells and c <= max(cells):
        return False
    return c < CELLS[variant] - LOCK_CELLS[variant] or len(cells) >= LOCK_THRESHOLD[variant]


def triangular(n: int) -> int:
    return n * (n + 1) // 2


def lucky_options(variant: str, player: dict, locked_rows: list[str], white_action: int) -> set[int]:
    """Longo rule 5: the next number of each open row with the fewest crosses, counted after
    the player's own white cross; only rows whose next number may be crossed qualify."""
    K = CELLS[variant]
    counts = {}
    for r, color in enumerate(COLORS):
        if color in locked_rows:
            continue
        cells = row_cells(variant, player, r)
        if white_action != pass_action(variant) and white_action // K == r:
            if white_action % K >= K - LOCK_CELLS[variant]:
                continue  # the player's own white cross locks this row
            cells = cells + [white_action % K]
        nxt = max(cells) + 1 if cells else 0
        if nxt < K and may_cross(variant, cells, nxt):
            counts[r * K + nxt] = len(cells)
    if not counts:
        return set()
    fewest = min(counts.values())
    return {a for a, n in counts.items() if n == fewest}


def expected_legal(variant: str, lucky: str, snap: dict, seat: int, pending_white: int | None) -> set[int]:
    """The decisions the rules allow the seat to act, from the snapshot and the dice alone."""
    K = CELLS[variant]
    player = snap["players"][seat]
    locked = snap["locked_rows"]
    w1, w2 = snap["dice"]["white"]
    phase = snap["phase"]
    if phase == "lucky":
        return lucky_options(variant, player, locked, pending_white)
    legal = {pass_action(variant)}
    for r, color in enumerate(COLORS):
        if color in locked:
            continue
        cells = row_cells(variant, player, r)
        sums = [w1 + w2] if phase == "white" else [w1 + snap["dice"][color], w2 + snap["dice"][color]]
        for total in sums:
            c = printed(variant)[r].index(total)
            if may_cross(variant, cells, c):
                legal.add(r * K + c)
    if phase == "white" and lucky == "instead" and w1 + w2 in player["lucky_numbers"]:
        legal |= lucky_options(variant, player, locked, pass_action(variant))
    return legal


# --- random games -----------------------------------------------------------------------------


@dataclass
class Step:
    seat: int
    action: int
    legal: set[int]  # what the acting agent's mask offered
    before: dict
    after: dict
    rewards: dict


@dataclass
class Game:
    opts: dict
    seed: int
    policy: str  # how the choices were drawn, to reproduce a failing game
    steps: list[Step] = field(default_factory=list)
    records: list[tuple[int, dict]] = field(default_factory=list)  # (steps taken, record)
    final_record: dict | None = None

    @property
    def variant(self) -> str:
        return self.opts["variant"]

    @property
    def lucky(self) -> str | None:
        return self.opts.get("lucky", "bonus") if self.variant == "longo" else None

    def __repr__(self) -> str:
        return f"Game({self.opts}, seed={self.seed}, {self.policy}, {len(self.steps)} steps)"

    def _repr_pretty_(self, printer, cycle) -> None:  # how Hypothesis shows a failing game
        printer.text(repr(self))

    def rolls(self) -> list[list[Step]]:
        """The steps grouped by roll (the roll number before each step)."""
        out: dict[int, list[Step]] = {}
        for step in self.steps:
            out.setdefault(step.before["roll"], []).append(step)
        return [out[k] for k in sorted(out)]


def step_bound(num_players: int, variant: str) -> int:
    """Every roll the active player crosses something or takes a penalty, so a game has at
    most P * (4K + 4) rolls, each of at most 2P + 1 decisions."""
    return num_players * (4 * CELLS[variant] + 4) * (2 * num_players + 1)


@st.composite
def games(draw) -> Game:
    variant = draw(st.sampled_from(("classic", "longo")))
    num_players = draw(st.integers(1, 5))
    opts: dict = {"num_players": num_players, "variant": variant}
    if variant == "longo":
        opts["lucky"] = draw(st.sampled_from(("bonus", "instead")))
        if draw(st.booleans()):
            pair = st.lists(st.integers(2, 16), min_size=2, max_size=2, unique=True)
            opts["lucky_numbers"] = draw(st.lists(pair, min_size=num_players, max_size=num_players))
    opts["start_player"] = draw(st.one_of(st.just("random"), st.integers(0, num_players - 1)))
    rewards = ("score", "score_delta") if num_players == 1 else ("win", "score", "score_delta", "margin")
    opts["reward"] = draw(st.sampled_from(rewards))
    seed = draw(st.integers(0, 2**32 - 1))
    pass_chance = draw(st.sampled_from((0.05, 0.3, 0.7)))
    choice_seed = draw(st.integers(0, 2**32 - 1))  # the stream of choices among legal actions
    record_at = draw(st.integers(0, 60))
    return play(opts, seed, pass_chance, choice_seed, record_at)


def play(opts: dict, seed: int, pass_chance: float, choice_seed: int, record_at: int) -> Game:
    game = Game(opts, seed, f"pass_chance={pass_chance}, choice_seed={choice_seed}, record_at={record_at}")
    choices = random.Random(choice_seed)
    env = qwixx_v0.raw_env(**opts)
    env.reset(seed=seed)
    skip = pass_action(opts["variant"])
    before = env.snapshot()
    for n in range(step_bound(opts["num_players"], opts["variant"])):
        if n == record_at:
            game.records.append((n, env.record()))
        agent = env.agent_selection
        legal = np.flatnonzero(env.observe(agent)["action_mask"]).tolist()
        if not legal:
            break
        crosses = [a for a in legal if a != skip]
        if skip in legal and (not crosses or choices.random() < pass_chance):
            action = skip
        else:
            action = choices.choice(crosses)
        env.step(action)
        after = env.snapshot()
        game.steps.append(
            Step(env.agent_name_mapping[agent], action, set(legal), before, after, dict(env.rewards))
        )
        before = after
    game.final_record = env.record()
    return game


def new_crosses(game: Game, step: Step, seat: int) -> set[int]:
    return crossed_actions(game.variant, step.after["players"][seat]) - crossed_actions(
        game.variant, step.before["players"][seat]
    )


# --- properties ---------------------------------------------------------------------------------


def test_random_play_reaches_the_situations_the_properties_are_about():
    """The game generator is not degenerate: lucky ties, locks in both actions, shared locks,
    and both ways to end occur among a few seeded games."""
    seen = set()
    for i in range(80):
        n = 1 + i % 5
        opts = {"num_players": n, "variant": ("classic", "longo")[i % 2], "reward": "score"}
        if i % 2:
            opts["lucky"] = ("bonus", "instead")[(i // 2) % 2]
        game = play(opts, seed=i, pass_chance=(0.05, 0.3)[i % 2], choice_seed=i, record_at=10)
        end = game.steps[-1].after
        seen.add("two rows" if len(end["locked_rows"]) >= 2 else "penalties")
        for step in game.steps:
            seen.add(step.before["phase"])
            gained = set(step.after["locked_rows"]) - set(step.before["locked_rows"])
            if gained:
                seen.add(f"lock in {step.before['phase']}")
                locks = [c for p in step.after["players"] for c in p["locks"] if c in gained]
                if len(locks) > len(gained):
                    seen.add("shared lock")
    assert seen >= {
        "white", "lucky", "color", "lock in white", "lock in color", "shared lock", "two rows", "penalties"
    }, seen



@SETTINGS
@given(games())
def test_every_game_ends_within_the_step_bound(game):
    assert game.steps[-1].after["phase"] == "over"
    assert len(game.steps) <= step_bound(game.opts["num_players"], game.variant)


@SETTINGS
@given(games())
def test_masks_offer_exactly_the_decisions_the_rules_allow(game):
    pending = {}
    for step in game.steps:
        phase = step.before["phase"]
        expected = expected_legal(game.variant, game.lucky, step.before, step.seat, pending.get(step.seat))
        assert step.legal == expected, (phase, step.seat, step.before)
        if phase == "white":
            pending[step.seat] = step.action
        elif phase == "color":
            pending.clear()


@SETTINGS
@given(games())
def test_new_crosses_lie_right_of_every_earlier_cross_in_their_row(game):
    for step in game.steps:
        for old, new in zip(step.before["players"], step.after["players"]):
            for r, color in enumerate(COLORS):
                cells = row_cells(game.variant, new, r)
                assert cells == sorted(set(cells))  # sheet order, no cell twice
                assert new["marks"][color][: len(old["marks"][color])] == old["marks"][color]


@SETTINGS
@given(games())
def test_a_lock_goes_with_its_lock_cell_and_the_threshold(game):
    K, lock_cells = CELLS[game.variant], LOCK_CELLS[game.variant]
    for step in game.steps:
        snap = step.after
        for player in snap["players"]:
            for r, color in enumerate(COLORS):
                cells = row_cells(game.variant, player, r)
                lock_crossed = [c for c in cells if c >= K - lock_cells]
                assert len(lock_crossed) <= 1  # after one lock cell the other is gone
                assert (color in player["locks"]) == bool(lock_crossed)
                if lock_crossed:
                    assert len(cells) - 1 >= LOCK_THRESHOLD[game.variant]
        everyone = [c for c in COLORS if any(c in p["locks"] for p in snap["players"])]
        assert snap["locked_rows"] == everyone


@SETTINGS
@given(games())
def test_scores_follow_the_score_table(game):
    for step in game.steps:
        for player in step.after["players"]:
            expected = sum(
                triangular(len(player["marks"][c]) + (c in player["locks"])) for c in COLORS
            ) - PENALTY_POINTS * player["penalties"]
            assert player["score"] == expected


@SETTINGS
@given(games())
def test_locked_rows_take_no_new_crosses_and_their_dice_leave_play(game):
    for step in game.steps:
        assert set(step.before["locked_rows"]) <= set(step.after["locked_rows"])
        for color in step.before["locked_rows"]:
            for old, new in zip(step.before["players"], step.after["players"]):
                assert new["marks"][color] == old["marks"][color]
        if step.after["phase"] != "over":
            for color in COLORS:
                assert (step.after["dice"][color] is None) == (color in step.after["locked_rows"])


@SETTINGS
@given(games())
def test_penalty_only_for_the_active_player_who_crossed_nothing_in_the_roll(game):
    for roll in game.rolls():
        active = roll[0].before["active_player"]
        start = roll[0].before
        for step in roll:
            for seat, (old, new) in enumerate(zip(step.before["players"], step.after["players"])):
                if seat != active or step.before["phase"] != "color":
                    assert new["penalties"] == old["penalties"]
        color_steps = [s for s in roll if s.before["phase"] == "color"]
        if not color_steps:
            continue  # the white action ended the game
        (colour,) = color_steps
        end = colour.after["players"][active]
        crossed = crossed_actions(game.variant, end) - crossed_actions(game.variant, start["players"][active])
        assert end["penalties"] - start["players"][active]["penalties"] == (0 if crossed else 1)


@SETTINGS
@given(games())
def test_decisions_go_round_from_the_active_player(game):
    P = game.opts["num_players"]
    rolls = game.rolls()
    for i, roll in enumerate(rolls):
        active = roll[0].before["active_player"]
        if i > 0:
            previous = rolls[i - 1][0].before["active_player"]
            assert active == (previous + 1) % P
        white = [s.seat for s in roll if s.before["phase"] == "white"]
        assert white == [(active + j) % P for j in range(P)]
        for j, step in enumerate(roll):
            if step.before["phase"] == "lucky":
                assert game.lucky == "bonus"
                assert roll[j - 1].before["phase"] == "white" and roll[j - 1].seat == step.seat
            if step.before["phase"] == "color":
                assert step.seat == active and j == len(roll) - 1


@SETTINGS
@given(games())
def test_white_choices_stay_hidden_then_take_effect_together(game):
    """Rule 6: nothing shows until every seat decided; then each seat's choice (and, in Longo
    with the bonus rule, its lucky cross) appears at once, judged against the roll's sheets."""
    for roll in game.rolls():
        at_roll = roll[0].before
        white_sum = sum(at_roll["dice"]["white"])
        white, lucky = {}, {}
        for step in roll:
            phase = step.before["phase"]
            if phase == "white":
                white[step.seat] = step.action
            elif phase == "lucky":
                lucky[step.seat] = step.action
            else:
                break
            if step.after["phase"] in ("white", "lucky"):
                # only the phase may change (a seat breaking its own lucky tie next)
                assert {**step.after, "phase": None} == {**step.before, "phase": None}
                continue
            # the last white decision: everything resolves together
            for seat, player in enumerate(at_roll["players"]):
                expected = set() if white[seat] == pass_action(game.variant) else {white[seat]}
                if game.lucky == "bonus" and white_sum in player["lucky_numbers"]:
                    options = lucky_options(game.variant, player, at_roll["locked_rows"], white[seat])
                    assert (seat in lucky) == (len(options) > 1)
                    if len(options) == 1:
                        expected |= options
                    elif options:
                        assert lucky[seat] in options
                        expected.add(lucky[seat])
                else:
                    assert seat not in lucky
                now = crossed_actions(game.variant, step.after["players"][seat])
                assert now - crossed_actions(game.variant, player) == expected, (seat, expected)


@SETTINGS
@given(games())
def test_the_colour_action_crosses_only_the_active_players_choice(game):
    for step in game.steps:
        if step.before["phase"] != "color":
            continue
        for seat in range(game.opts["num_players"]):
            expected = (
                {step.action} if seat == step.seat and step.action != pass_action(game.variant) else set()
            )
            assert new_crosses(game, step, seat) == expected


@SETTINGS
@given(games())
def test_the_game_ends_exactly_when_two_rows_lock_or_a_fourth_penalty(game):
    for step in game.steps:
        snap = step.after
        ended = len(snap["locked_rows"]) >= 2 or any(p["penalties"] >= MAX_PENALTIES for p in snap["players"])
        assert (snap["phase"] == "over") == ended


@SETTINGS
@given(games())
def test_rewards_follow_the_reward_mode(game):
    agents = [f"player_{i}" for i in range(game.opts["num_players"])]
    final = [p["score"] for p in game.steps[-1].after["players"]]
    totals = {a: sum(step.rewards[a] for step in game.steps) for a in agents}
    mode = game.opts["reward"]
    if mode == "score_delta":
        assert totals == dict(zip(agents, final))
        return
    assert all(v == 0 for step in game.steps[:-1] for v in step.rewards.values())  # terminal only
    for i, agent in enumerate(agents):
        best_other = max((s for j, s in enumerate(final) if j != i), default=None)
        expected = {
            "score": final[i],
            "margin": None if best_other is None else final[i] - best_other,
            "win": None if best_other is None else (final[i] > best_other) - (final[i] < best_other),
        }[mode]
        assert totals[agent] == expected


@SETTINGS
@given(games())
def test_replay_reproduces_every_recorded_position(game):
    for taken, record in game.records:
        expected = game.steps[taken - 1].after if taken else game.steps[0].before
        assert record["snapshot"] == expected
        assert replay(record).snapshot() == expected
    assert replay(game.final_record).snapshot() == game.steps[-1].after
