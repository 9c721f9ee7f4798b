"""Adapters for other RL libraries: RLlib, OpenSpiel, TorchRL, Tianshou, AgileRL, BenchMARL and
PufferLib (docs/integrations.md).

Each library is an optional extra; importing `qwixx_env` never imports one.
"""
