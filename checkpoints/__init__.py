"""Pretrained bots, installed as the package ``qwixx_env.checkpoints`` (package data only).

Each bot is ``<name>.npz`` (weights) + ``<name>.json`` (description) + ``<name>.md`` (model
card); `qwixx_env.bots.pretrained` finds this folder, registers every bot under its name and
loads it with numpy alone. `docs/pretrained.md` describes the files.
"""
