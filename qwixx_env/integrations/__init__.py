"""Adapters for other RL libraries: RLlib, OpenSpiel and TorchRL (docs/integrations.md).

Each library is an optional extra; importing `qwixx_env` never imports one.
"""
