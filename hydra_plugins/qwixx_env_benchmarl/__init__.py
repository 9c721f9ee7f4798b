"""Hydra search-path plugin of qwixx_env: BenchMARL's command line finds the Qwixx task.

Hydra imports every module under the ``hydra_plugins`` namespace when a Hydra app starts. This
one adds ``pkg://qwixx_env.integrations.benchmarl_conf`` (``task/qwixx/<table>.yaml``) to the
config search path, and, where BenchMARL is installed, registers each member of
`qwixx_env.integrations.benchmarl.QwixxTask` in BenchMARL's task registry, so that
``python -m benchmarl.run algorithm=mappo task=qwixx/classic_3p`` names the task. Without
BenchMARL it adds the search path alone and imports nothing heavy.
"""

from __future__ import annotations

from importlib.util import find_spec

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class QwixxBenchmarlSearchPath(SearchPathPlugin):
    """Appends the Qwixx task's config folder to every Hydra app's search path."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        search_path.append(provider="qwixx_env", path="pkg://qwixx_env.integrations.benchmarl_conf")


if find_spec("benchmarl") is not None:
    from qwixx_env.integrations.benchmarl import register_tasks

    register_tasks()
