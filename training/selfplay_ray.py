"""The self-play learner's games on Ray actors: the league at scale (``runners:`` in a config).

`RayPlayers` starts ``runners`` actors (`SelfPlayRunner`, one CPU each, spread over the
cluster's nodes) and cuts each round's games, and each evaluation's, into one part per actor.
An actor plays its part with `training.selfplay.play_part`, the function the threads of one
process run, and labels its own positions (TD(lambda) under the network it was sent), so what
comes back is the training data itself, as float32. The games of a round depend on its seeds
alone, never on how it was cut: the same config and seed learn the same network with 0, 1 or
8 runners, on one machine or many (a run may `--resume` with another number of runners).

The driver (the process that runs `qwixx-train`) keeps the network, trains it between rounds
and sends each round's weights to the actors through Ray's object store (one ``ray.put`` a
round, read by every actor). With ``ray_address`` null a local Ray is started with a CPU for
each runner; with an address (``"auto"``, ``"10.0.0.5:6379"``) the runners go where that
cluster has CPUs (docs/integrations.md, "A cluster"). A runner that dies is restarted by Ray
and its part played again (the same seeds give the same games).

This is Ray, the runtime RLlib runs on, not an RLlib `Algorithm`: RLlib's algorithms learn a
policy from sampled episodes, while this learner labels afterstates with TD(lambda) targets
(docs/research/self-play.md says why it is the learner that learns here).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import ray

from qwixx_env.core.variant import custom_sheet, register_sheet
from qwixx_env.training.selfplay import SelfPlayConfig, join_parts, play_part, play_policy_part, split

OBJECT_STORE_MB = 512
"""A local Ray's object store: a round's positions (about 55 MB at 2 players, 4,000 games) twice."""


@ray.remote(num_cpus=1, max_restarts=3, max_task_retries=3)
class SelfPlayRunner:
    """A Ray actor that plays parts of rounds (`training.selfplay.play_part`)."""

    def __init__(self, variant: str, num_players: int, td_lambda: float, sheet: dict[str, Any] | None = None):
        if sheet is not None:  # a user's sheet: registered in this process too (`custom_sheet`)
            register_sheet(sheet, variant, "the run")
        self.variant, self.num_players, self.td_lambda = variant, num_players, td_lambda

    def play(self, learner, snapshot, kinds: np.ndarray, records: np.ndarray, seeds: np.ndarray,
             explore: float) -> dict[str, Any]:
        # Arrays from the object store are read-only: copies keep the kernels' compiled types.
        learner, snapshot = (tuple(np.array(a) for a in net) for net in (learner, snapshot))
        return play_part(self.variant, self.num_players, learner, snapshot, np.array(kinds), np.array(records),
                         np.array(seeds), explore, self.td_lambda)

    def play_policy(self, policy_name: str, seeds: np.ndarray, width: int) -> dict[str, Any]:
        return play_policy_part(self.variant, self.num_players, policy_name, np.array(seeds), width)


class RayPlayers:
    """`cfg.runners` actors playing a run's games (the `training.selfplay.ThreadPlayers` interface)."""

    def __init__(self, cfg: SelfPlayConfig):
        self.cfg = cfg
        self.started_ray = False
        if not ray.is_initialized():
            address = cfg.ray_address or os.environ.get("RAY_ADDRESS")
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                # "local": a Ray of its own, even where `ray start` left a cluster on this machine
                ray.init(address="local", num_cpus=max(cfg.runners, os.cpu_count() or 1),
                         object_store_memory=OBJECT_STORE_MB * 2**20, include_dashboard=False, log_to_driver=False)
            self.started_ray = True
        self.actors: list[Any] = [SelfPlayRunner.options(scheduling_strategy="SPREAD").remote(  # type: ignore[attr-defined]
            cfg.variant, cfg.num_players, cfg.td_lambda, custom_sheet(cfg.variant)) for _ in range(cfg.runners)]

    def play(self, learner, snapshot, kinds: np.ndarray, records: np.ndarray, seeds: np.ndarray,
             explore: float) -> dict[str, Any]:
        learner_ref = ray.put(learner)  # once a round, read by every actor
        snapshot_ref = learner_ref if snapshot is learner else ray.put(snapshot)
        return self.in_parts(len(seeds), lambda actor, a, n: actor.play.remote(
            learner_ref, snapshot_ref, kinds[a : a + n], records[a : a + n], seeds[a : a + n], explore))

    def play_policy(self, policy_name: str, seeds: np.ndarray, width: int) -> dict[str, Any]:
        return self.in_parts(len(seeds), lambda actor, a, n: actor.play_policy.remote(
            policy_name, seeds[a : a + n], width))

    def in_parts(self, games: int, part) -> dict[str, Any]:
        """`part(actor, start, count)` (a remote call) for each actor's slice of `games`, joined in order."""
        futures = [part(actor, a, n) for actor, (a, n) in zip(self.actors, split(games, len(self.actors)))]
        return join_parts(ray.get(futures))

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self.started_ray:
            ray.shutdown()
            self.started_ray = False

