"""AgileRL (the agilerl extra): `qwixx_env.integrations.agilerl` trains AgileRL's DQN by
self-play or against a bot through Qwixx's turn order (every seat's white decision, then the
active seat's colour decision) on legal actions only, one transition per learner decision,
the same run for the same seed; and the docs' AgileRL snippet runs as written."""

from __future__ import annotations

import pytest
from test_parallel import run_snippets

from qwixx_env import qwixx_v0

pytest.importorskip("agilerl", reason="the agilerl extra is not installed (runs in make test-integrations)")
import torch  # noqa: E402  (AgileRL needs it: there when AgileRL is)

from qwixx_env.integrations.agilerl import Settings, main, make_dqn, train_dqn  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def weights(agent) -> list[torch.Tensor]:
    return [t.clone() for t in agent.actor.state_dict().values()]


def test_self_play_trains_on_legal_actions_one_transition_per_learner_decision():
    settings = Settings(steps=600, batch_size=32, refresh=5, seed=3)
    torch.manual_seed(settings.seed)  # the first weights, as train_dqn makes them
    first = weights(make_dqn(settings, qwixx_v0.env(num_players=2)))
    run = train_dqn(settings)

    assert run.illegal == 0
    # an illegal action would have ended its game at -2 (the "win" mode's illegal return)
    assert set(run.returns) <= {-1.0, 0.0, 1.0} and len(run.returns) == run.games > 5
    assert run.decisions >= settings.steps
    # every learner decision is one transition: to the learner's next decision or to the game's end
    assert len(run.memory) == run.decisions
    stored = run.memory.storage[: len(run.memory)]
    assert stored["done"].sum().item() == run.games  # one terminal transition per game
    assert stored["reward"].sum().item() == sum(run.returns)  # the rewards between decisions, none lost
    # a learning step every learn_step decisions, once the memory holds a batch (before the decision's own transition)
    learned_at = range(settings.batch_size + 1, run.decisions + 1)
    assert run.updates == sum(1 for d in learned_at if d % settings.learn_step == 0)
    assert all(not torch.equal(a, b) for a, b in zip(first, weights(run.agent)))  # DQN learned


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    def play(seed):
        run = train_dqn(Settings(steps=200, batch_size=16, seed=seed))
        return run.returns, weights(run.agent)

    (returns, net), (again, net_again), (_, net_other) = play(1), play(1), play(2)
    assert returns == again and all(torch.equal(a, b) for a, b in zip(net, net_again))
    assert not all(torch.equal(a, b) for a, b in zip(net, net_other))


def test_against_a_bot_on_a_three_seat_table_the_learner_takes_every_seat():
    run = train_dqn(Settings(num_players=3, opponent="greedy", steps=250, batch_size=16, seed=0))
    assert run.illegal == 0 and run.games >= 3  # seats 0, 1, 2 in turn
    assert len(run.memory) == run.decisions


@pytest.mark.parametrize(("option", "value", "message"), [
    ("steps", 0, "steps: got 0; expected a positive integer"),
    ("gamma", 1.5, "gamma: got 1.5"),
    ("opponent", "nobody", "nobody"),
    ("num_players", 6, "num_players"),
])
def test_bad_settings_are_named(option, value, message):
    with pytest.raises(ValueError, match=message):
        train_dqn(Settings(**{option: value}))


def test_the_command_trains_and_measures(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "--opponent" in capsys.readouterr().out
    main(["--steps", "60", "--batch-size", "16", "--opponent", "random", "--eval-games", "2"])
    out = capsys.readouterr().out
    assert "0 illegal actions" in out and "win share against greedy: " in out and "over 4 games" in out


def test_docs_snippet_runs_as_written(capsys):
    out, shown = run_snippets("AgileRL", capsys)
    assert "0 illegal actions" in shown
    assert out == shown
