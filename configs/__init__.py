"""The shipped training configs (YAML files), installed as the package ``qwixx_env.configs``.

The repository's top-level ``configs/`` folder installs as this package's data, so that
``qwixx-train classic_2p`` finds a config by name from a wheel as from a checkout
(`qwixx_env.training.config_yaml.config_path`). docs/training.md describes each file.
"""
