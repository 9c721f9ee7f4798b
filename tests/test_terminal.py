"""The terminal game (`qwixx play`, `qwixx_env.play.terminal`): whole games through standard
input, typos included; the record saved at the end, at the end of input and on Ctrl-C; bad
options refused by name."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from qwixx_env import replay
from qwixx_env.cli import main
from qwixx_env.core import compile
from qwixx_env.play import terminal


class Person(io.StringIO):
    """A player at the keyboard: reads the options the game printed last and answers with
    `choose(labels)`, after `typos` (lines that are not options) on every third prompt."""

    def __init__(self, out: io.StringIO, choose, typos=("r99", "xyz", "", "?", "h", "99")):
        super().__init__()
        self.out, self.choose, self.typos, self.prompts = out, choose, list(typos), 0

    def readline(self, *args):
        self.prompts += 1
        if self.typos and self.prompts % 3 == 0:
            return self.typos.pop(0) + "\n"
        text = self.out.getvalue()
        options = text[text.rindex("Your options:"):]
        labels = re.findall(r"^\s+\d+\s+(\S+)\s", options.split("\n", 1)[1], flags=re.M)
        return self.choose(labels) + "\n"


def scores_printed(out: str) -> list[int]:
    """The scores of "Final scores: you 12, player_1 (greedy) 30." in seat order."""
    line = re.search(r"Final scores: (.*?)\.( |$)", out, flags=re.M).group(1)
    return [int(x) for x in re.findall(r"(?:you|player_\d+ \([^)]*\)) (-?\d+)", line)]


def test_a_whole_game_through_standard_input_with_typos(tmp_path):
    path = tmp_path / "game.json"
    game = terminal.setup(players=2, bots_=["greedy"], seed=4, record=path)
    out = io.StringIO()
    person = Person(out, lambda labels: labels[0])  # the first option: a cross where there is one (pass is last)
    assert terminal.play(game, person, out) == 0
    text = out.getvalue()
    record = json.loads(path.read_text())
    final = replay(record).snapshot()
    assert final["phase"] == "over"
    assert scores_printed(text) == [p["score"] for p in final["players"]]
    assert f"The game record is saved to {path}" in text
    # every typo was answered with what is accepted, and the game went on
    assert "'r99' is not an option. Type one of " in text and "'xyz' is not an option" in text
    assert "'99' is not an option" in text and "'' is not an option" in text
    assert "Coach (afterstate), best first:" in text and "Each option has a label" in text
    assert "White action (sum" in text and "Colour action: player_1 (greedy)" in text
    assert "\033[" not in text  # no colour on a stream that is not a terminal


def test_a_solo_game_with_the_coach_reviews_it_at_the_end(tmp_path, classic):
    path = tmp_path / "solo.json"
    game = terminal.setup(players=1, seed=2, coach=True, record=path)
    out = io.StringIO()
    assert terminal.play(game, Person(out, lambda labels: labels[-1], typos=()), out) == 0  # always pass
    text = out.getvalue()
    record = json.loads(path.read_text())
    assert scores_printed(text) == [replay(record).snapshot()["players"][0]["score"]]
    assert "regret" in text and "best" in text
    assert re.search(r"Coach's review \(solver\): \d+ decisions of yours, total regret \d+\.\d\d points", text)
    assert len(re.findall(r"^  decision \d+, roll \d+, (white|colour) action: you played p, the best was", text,
                          flags=re.M)) == 3


def test_a_label_that_is_not_legal_now_says_so(tmp_path):
    out = io.StringIO()
    game = terminal.setup(players=1, seed=0, record=tmp_path / "g.json")
    assert terminal.play(game, io.StringIO("r12\nq\n"), out) == 0  # red 12 needs 5 red crosses first
    assert "r12 (cross red 12) is not legal now. Type one of " in out.getvalue()


def test_end_of_input_mid_game_saves_the_record_and_exits_0(tmp_path, monkeypatch, capsys):
    path = tmp_path / "left.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("p\n"))
    status = main(["play", "--players", "3", "--bots", "random,heuristic", "--seed", "9", "--record", str(path)])
    # the input ends at the second prompt: the colour action of the first roll (roll 1)
    assert status == 0
    assert f"Game left at roll 1; the record so far is saved to {path}" in capsys.readouterr().out
    game = replay(json.loads(path.read_text()))
    assert game.snapshot()["phase"] == "color" and game.agent_selection == "player_0"
    assert game.record()["decisions"][0] == [0, 44]


@pytest.mark.slow  # a fresh Python process
@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process needs a POSIX system")
def test_ctrl_c_saves_the_record_and_exits_130(tmp_path):
    path = tmp_path / "interrupted.json"
    env = dict(os.environ)
    if compile.kernel_cache_dir():  # this session's compiled kernels, whatever QWIXX_ENV_CACHE a fixture set since
        env["NUMBA_CACHE_DIR"] = compile.kernel_cache_dir()
    child = subprocess.Popen(
        [sys.executable, "-m", "qwixx_env.cli", "play", "--seed", "3", "--record", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # Ctrl-C's default action, even where this test runs with SIGINT ignored (a background job)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        child.stdin.write("p\n")
        child.stdin.flush()
        seen = ""
        deadline = time.monotonic() + 60
        while seen.count("Your choice: ") < 2 and time.monotonic() < deadline:
            seen += child.stdout.read1(4096).decode() if hasattr(child.stdout, "read1") else child.stdout.read(1)
        child.send_signal(signal.SIGINT)
        rest, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == terminal.EXIT_INTERRUPTED, err
    assert f"Interrupted; the record so far is saved to {path}" in seen + rest
    assert len(replay(json.loads(path.read_text())).record()["decisions"]) >= 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--bots", "nobody"], r"--bots: got 'nobody'; expected names from \['afterstate'"),
        (["--bots", "ppo-classic-2p", "--players", "3"],
         r"--bots: 'ppo-classic-2p' cannot play classic with 3 players"),
        (["--bots", "ppo-longo-2p", "--variant", "classic"], r"'ppo-longo-2p' cannot play classic"),
        (["--players", "6"], r"--players: got 6; expected an integer from 1 to 5"),
        (["--players", "0"], r"--players: got 0; expected an integer from 1 to 5"),
        (["--players", "4", "--bots", "random,greedy"], r"--bots: got 2 bots for 4 players"),
        (["--seat", "2"], r"--seat: got 2; expected an integer from 0 to 1"),
        (["--lucky", "instead"], r"--lucky: got 'instead'; the lucky rule is for a variant with lucky numbers"),
        (["--coach-bot", "ppo-classic-3p"], r"--coach-bot: 'ppo-classic-3p' cannot play classic with 2 players"),
        (["--record", "/"], r"--record: '/' is a folder"),
        (["--record", "/no/such/folder/g.json"],
         r"--record: '/no/such/folder/g.json' is in a folder that does not exist"),
    ],
)
def test_bad_options_are_refused_naming_what_is_accepted(argv, message, capsys):
    assert main(["play", *argv]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_pretrained_bot_sets_the_game_it_was_trained_for(tmp_path):
    game = terminal.setup(bots_=["ppo-longo-2p"], record=tmp_path / "g.json")
    assert (game.variant, game.players, game.lucky, game.bots) == ("longo", 2, "bonus", (None, "ppo-longo-2p"))
    game = terminal.setup(bots_=["ppo-classic-3p"], seat=2, record=tmp_path / "g.json")
    assert game.bots == ("ppo-classic-3p", "ppo-classic-3p", None)
    # the lucky rule too: a bot trained with the lucky cross instead of the white cross
    game = terminal.setup(bots_=["ppo-longo-instead-3p"], record=tmp_path / "g.json")
    assert (game.variant, game.players, game.lucky) == ("longo", 3, "instead")


def test_colour_follows_the_terminal_and_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert terminal.use_color(Tty()) and not terminal.use_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not terminal.use_color(Tty()) and terminal.use_color(io.StringIO(), "always")
    drawn = terminal.colorize("  red       [2]   3  L\nplayer_0")
    assert drawn.startswith("\033[31m") and "\033[7m[2]\033[27m" in drawn and drawn.endswith("player_0")


def test_the_solo_coach_says_so_before_it_solves_the_table(tmp_path, monkeypatch):
    monkeypatch.setattr(terminal, "table_path", lambda variant: tmp_path / "no-table-yet.npz")
    for players, notice in ((1, "The coach solves solo Qwixx first (once; the table is then cached)"), (2, "")):
        out = io.StringIO()
        game = terminal.setup(players=players, seed=1, record=tmp_path / "g.json")
        terminal.TerminalGame(game, io.StringIO(), out).table_notice()
        assert notice in out.getvalue() and bool(out.getvalue()) == bool(notice)  # no solver at 2 players
