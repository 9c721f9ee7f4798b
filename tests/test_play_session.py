"""The play session (`qwixx_env.play.session`): a table of people and bots, advanced to each
person's decision, told as events that say exactly what the sheets show."""

from __future__ import annotations

import json

import pytest

from qwixx_env import replay
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import COLORS, Row, Variant, encode_action, register_variant
from qwixx_env.envs.qwixx_v0 import raw_env
from qwixx_env.play.games import sheet_layout
from qwixx_env.play.session import HUMAN, PlaySession, seen_by

UP = tuple(range(2, 13))
CYCLE = ("red", "yellow", "green")
# three rows, top and middle mixing the colours of the three coloured dice, bottom all green
TRIO = register_variant(Variant(
    name="session_trio", faces=6, lock_cells=1, lock_threshold=5,
    score_table=tuple(k * (k + 1) // 2 for k in range(13)),
    rows=(Row("top", UP, colors=tuple(CYCLE[i % 3] for i in range(11))),
          Row("middle", UP[::-1], colors=tuple(CYCLE[(i + 1) % 3] for i in range(11))),
          Row("bottom", UP, colors=("green",) * 11)),
))


def told(events):
    """The events without their snapshots (the facts they tell)."""
    return [{k: v for k, v in e.items() if k != "snapshot"} for e in events]


def mark(row, number):
    return {"row": row, "number": number, "label": f"{row[0]}{number}"}


def test_a_bot_only_table_plays_to_the_end():
    session = PlaySession(TableOptions(num_players=3), ["greedy", "heuristic", "random"], seed=5)
    events = session.advance()
    final = session.env.snapshot()
    assert session.over and session.to_decide is None and final["phase"] == "over"
    scores = [p["score"] for p in final["players"]]
    winners = [s for s in range(3) if scores[s] == max(scores)]
    assert events[-1] == {"kind": "over", "scores": scores, "winners": winners}
    assert [e["roll"] for e in events if e["kind"] == "roll"] == list(range(final["roll"] + 1))
    record = session.record()
    assert replay(record).snapshot() == final and len(record["decisions"]) == session.decisions
    assert sum(e["kind"] == "decision" for e in events) == session.decisions
    assert session.advance() == [] and session.events == events
    assert json.loads(json.dumps(events)) == events  # JSON-ready


def test_the_first_roll_of_a_known_game_is_told_as_it_happened():
    """Longo, seed 8: white 2 + 6 = 8, one of your lucky numbers (8, 11). You cross red 8; your
    other rows tie with no crosses, so you choose the lucky cross (green 16); greedy passes.
    The reveal tells both your crosses, the lucky one marked, and greedy's pass."""
    session = PlaySession(TableOptions(num_players=2, variant="longo"), [HUMAN, "greedy"], seed=8)
    assert told(session.advance()) == [
        {"kind": "roll", "roll": 0, "active": 0, "white_sum": 8,
         "dice": {"white": [2, 6], "red": 1, "yellow": 7, "green": 2, "blue": 5}},
    ]
    r8, g16, passing = encode_action(("red", 8), "longo"), encode_action(("green", 16), "longo"), 60
    # your white cross causes the lucky tie: it is told with the row you pick for the lucky cross
    assert told(session.decide(0, r8)) == []
    assert (session.decisions, session.public_decisions) == (1, 0)
    assert session.pending(0) == [{"seat": 0, "action": r8, "mark": mark("red", 8)}]
    events = session.decide(0, g16)
    assert (session.decisions, session.public_decisions) == (3, 2)  # your two told as one
    assert told(events) == [
        {"kind": "decision", "seat": 0, "roll": 0, "phase": "white", "action": r8, "mark": mark("red", 8),
         "lucky": {"action": g16, "mark": mark("green", 16)}, "to_decide": 1},
        {"kind": "decision", "seat": 1, "roll": 0, "phase": "white", "action": passing, "mark": None,
         "to_decide": 0},
        {"kind": "white", "roll": 0, "white_sum": 8, "to_decide": 0,
         "choices": [{"seat": 0, "action": r8, "mark": mark("red", 8)},
                     {"seat": 0, "action": g16, "mark": mark("green", 16)},
                     {"seat": 1, "action": passing, "mark": None}],
         "outcomes": [{"seat": 0, "crosses": [{**mark("red", 8), "lucky": False}, {**mark("green", 16), "lucky": True}],
                       "locks": []},
                      {"seat": 1, "crosses": [], "locks": []}]},
    ]
    # nothing shows on the sheets until the last choice resolves the white action; then both your crosses do
    assert events[0]["snapshot"]["players"] == session.start["players"]
    assert events[1]["snapshot"] == events[2]["snapshot"]
    assert events[2]["snapshot"]["players"][0]["marks"] == {"red": [8], "yellow": [], "green": [16], "blue": []}
    assert session.pending(0) == [] and session.pass_costs_penalty(0) is False  # you crossed in the white action


def sheet_facts(snap, seat):
    p = snap["players"][seat]
    return {(c, n) for c in COLORS for n in p["marks"][c]}, set(p["locks"]), p["penalties"]


@pytest.mark.parametrize(
    "table, seats, seed",
    [
        (TableOptions(num_players=4), ["random", "greedy", "random", "heuristic"], 3),
        (TableOptions(num_players=3, variant="longo"), ["heuristic", "random", "greedy"], 4),
        (TableOptions(num_players=2, variant="longo", lucky="instead"), ["greedy", "heuristic"], 1),
    ],
    ids=["classic-4p", "longo-bonus-3p", "longo-instead-2p"],
)
def test_every_event_of_a_seeded_game_tells_what_the_sheets_show(table, seats, seed):
    """Replay the game's record decision by decision beside its events: each decision event is
    the record's next decision; each reveal names every choice of its roll and exactly what each
    sheet gained since the roll (the white-sum crosses, the lucky ones, the locks); each colour
    action its cross, its lock and whether it cost a penalty; nothing else changes a sheet."""
    session = PlaySession(table, seats, seed)
    events = session.advance()
    env = raw_env(table=table)
    env.reset(seed=seed)
    decisions = iter(session.record()["decisions"])
    roll_start = env.snapshot()
    choices, revealed, seen = [], {}, {"penalty": 0, "lock": 0, "lucky": 0}
    for i, event in enumerate(events):
        if event["kind"] == "roll":
            roll_start = env.snapshot()
            assert (event["roll"], event["active"], event["dice"]) == (
                roll_start["roll"], roll_start["active_player"], roll_start["dice"])
            assert event["white_sum"] == sum(roll_start["dice"]["white"])
        elif event["kind"] == "decision":
            before = env.snapshot()
            seat, action = next(decisions)
            assert (event["seat"], event["action"], event["phase"], event["roll"]) == (
                seat, action, before["phase"], before["roll"])
            env.step(action)
            if "lucky" in event:  # a white choice told with the lucky tie it caused: the seat's next decision
                assert env.snapshot()["phase"] == "lucky" and event["phase"] == "white"
                assert list(next(decisions)) == [seat, event["lucky"]["action"]]
                choices.append({"seat": seat, "action": action})
                action = event["lucky"]["action"]
                env.step(action)
            after = env.snapshot()
            assert event["snapshot"] == after
            if event["phase"] == "color":
                marks, locks, penalties = sheet_facts(after, seat)
                marks0, locks0, penalties0 = sheet_facts(before, seat)
                crossed = set() if event["mark"] is None else {(event["mark"]["row"], event["mark"]["number"])}
                assert marks - marks0 == crossed and set(event["locks"]) == locks - locks0
                assert event["penalty"] == (penalties == penalties0 + 1) and penalties - penalties0 in (0, 1)
                # a penalty: the active player crossed nothing in the roll, neither in the white action nor now
                assert event["penalty"] == (event["mark"] is None and not revealed[seat])
                for other in range(table.num_players):
                    if other != seat:
                        assert sheet_facts(after, other) == sheet_facts(before, other)
                seen["penalty"] += event["penalty"]
                seen["lock"] += len(event["locks"])
            else:
                if events[i + 1]["kind"] != "white":  # a white choice shows on no sheet until the last one
                    assert after["players"] == before["players"]
                choices.append({"seat": seat, "action": action})
        elif event["kind"] == "white":
            after = env.snapshot()
            assert event["snapshot"] == after and event["white_sum"] == sum(roll_start["dice"]["white"])
            assert [{"seat": c["seat"], "action": c["action"]} for c in event["choices"]] == choices
            for outcome in event["outcomes"]:
                seat = outcome["seat"]
                marks, locks, penalties = sheet_facts(after, seat)
                marks0, locks0, penalties0 = sheet_facts(roll_start, seat)
                assert {(m["row"], m["number"]) for m in outcome["crosses"]} == marks - marks0
                assert set(outcome["locks"]) == locks - locks0 and penalties == penalties0
                mine = [c["action"] for c in choices if c["seat"] == seat]
                for m in outcome["crosses"]:
                    white_cross = m["number"] == event["white_sum"] and encode_action((m["row"], m["number"]),
                                                                                       table.rules) in mine
                    assert m["lucky"] is (not white_cross)
                    seen["lucky"] += m["lucky"]
                seen["lock"] += len(outcome["locks"])
                revealed[seat] = outcome["crosses"]
            choices = []
        else:
            assert event["kind"] == "over" and event is events[-1]
            assert event["scores"] == [p["score"] for p in env.snapshot()["players"]]
    assert next(decisions, None) is None and env.snapshot() == session.env.snapshot()
    assert seen["penalty"] and seen["lock"]  # the seeds are chosen so that each game has both
    assert bool(seen["lucky"]) == (table.variant == "longo")


def test_a_persons_decision_is_checked_and_a_refusal_changes_nothing():
    session = PlaySession(TableOptions(num_players=3), [HUMAN, "greedy", HUMAN], seed=4)
    session.advance()
    assert session.to_decide == 0 and session.humans == (0, 2)

    def state():
        return session.env.snapshot(), session.record(public=False), session.decisions, len(session.events)

    before = state()
    legal = [o["action"] for o in session.legal()]
    illegal = next(a for a in range(45) if a not in legal)
    for seat, action, words in [
        (0, illegal, rf"action {illegal} \(\w+ \d+\) is not legal now; legal: .*44 \(pass\)"),
        (0, 99, r"action 99 \(outside the action space 0\.\.44\) is not legal now"),
        (0, "p", r"action 'p' is not legal now; legal: "),
        (0, True, r"action True is not legal now"),
        (1, 44, r"seat: got 1; it is a bot's seat; people play seat\(s\) \[0, 2\]"),
        (2, 44, r"seat: got 2; the decision now is seat 0's"),
        (3, 44, r"seat: got 3; expected a seat from 0 to 2"),
        ("0", 44, r"seat: got '0'; expected a seat from 0 to 2"),
    ]:
        with pytest.raises(ValueError, match=words):
            session.decide(seat, action)
        assert state() == before
    while not session.over:
        session.decide(session.to_decide, session.legal()[-1]["action"])  # every person passes
    before = state()
    with pytest.raises(ValueError, match=r"the game is over \(final scores \[.*\]\)"):
        session.decide(0, 44)
    assert state() == before


def test_several_people_at_one_table_keep_their_white_choices_from_each_other():
    session = PlaySession(TableOptions(num_players=3), [HUMAN, "greedy", HUMAN], seed=4)
    session.advance()
    white = session.legal()[0]["action"]
    mine = session.decide(0, white)  # greedy chooses next, then it is seat 2's white choice
    assert session.to_decide == 2 and [e["seat"] for e in mine] == [0, 1]
    assert seen_by(mine[0], 0) == mine[0] and "hidden" not in mine[0]
    assert seen_by(mine[0], 2) == {**mine[0], "action": None, "mark": None, "hidden": True}
    assert seen_by(mine[1], 0)["hidden"] and seen_by(mine[1], 2)["hidden"]
    assert session.pending(0) and session.pending(2) == []
    assert session.record()["decisions"] == []  # what everyone may see: the roll, no choice yet
    assert session.record(public=False)["decisions"] == [[0, white], [1, mine[1]["action"]]]
    reveal = session.decide(2, 44)[1]
    assert reveal["kind"] == "white" and [c["seat"] for c in reveal["choices"]] == [0, 1, 2]
    assert seen_by(reveal, 2) == reveal  # the reveal shows every choice to everyone


@pytest.mark.parametrize(
    "seats, error, words",
    [
        ([HUMAN], ValueError, r"seats: got \['human'\]; expected 2 seats"),
        ("human", ValueError, r"seats: got 'human'; expected 2 seats"),
        ([HUMAN, 7], ValueError, r"seats\[1\]: got 7; expected 'human', a bot name or a bot"),
        ([HUMAN, "nobot"], ValueError, r"bot name: got 'nobot'; expected one of"),
        ([HUMAN, "ppo-classic-3p"], ValueError, r"num_players: got 2"),
    ],
)
def test_a_bad_seat_is_refused_by_name(seats, error, words):
    with pytest.raises(error, match=words):
        PlaySession(TableOptions(num_players=2), seats, seed=0)


def test_a_table_must_be_table_options():
    with pytest.raises(TypeError, match=r"table: got \{'num_players': 2\}; expected a TableOptions"):
        PlaySession({"num_players": 2}, [HUMAN, HUMAN], seed=0)
    with pytest.raises(ValueError, match=r"seed: got -1"):
        PlaySession(TableOptions(), [HUMAN, HUMAN], seed=-1)


def test_a_three_row_sheet_of_mixed_colours_is_told_by_its_rows_names():
    """Two people cross the first option each time: every cross is told by its row's name and
    label (t, m, b), the reveals add up to the sheets, and the page's layout is the variant's."""
    session = PlaySession(TableOptions(num_players=2, variant=TRIO), [HUMAN, HUMAN], seed=3)
    events = session.advance()
    while not session.over:
        events += session.decide(session.to_decide, session.legal()[0]["action"])
    told_crosses = {0: set(), 1: set()}
    for e in events:
        if e["kind"] == "white":
            for out in e["outcomes"]:
                told_crosses[out["seat"]] |= {(m["row"], m["number"]) for m in out["crosses"]}
        elif e["kind"] == "decision" and e["phase"] == "color" and e["mark"]:
            told_crosses[e["seat"]].add((e["mark"]["row"], e["mark"]["number"]))
    final = session.env.snapshot()
    for seat, player in enumerate(final["players"]):
        assert told_crosses[seat] == {(row, n) for row, numbers in player["marks"].items() for n in numbers}
    marks = [e["mark"] for e in events if e["kind"] == "decision" and e["mark"]]
    assert {m["row"] for m in marks} <= {"top", "middle", "bottom"} and marks
    assert all(m["label"] == f"{m['row'][0]}{m['number']}" for m in marks)
    layout = sheet_layout(TRIO)
    assert layout["row_names"] == ["top", "middle", "bottom"] and layout["dice_colors"] == ["red", "yellow", "green"]
    assert layout["rows"]["middle"] == list(UP[::-1]) and layout["lock_numbers"] == {"top": [12], "middle": [2],
                                                                                    "bottom": [12]}
    assert layout["cell_colors"]["top"][:4] == ["red", "yellow", "green", "red"]
    assert layout["cell_colors"]["bottom"] == ["green"] * 11
    assert list(final["dice"]) == ["white", "red", "yellow", "green"]
