"""BenchMARL's config folder for the Qwixx task: ``task/qwixx/<table>.yaml``, one file per member
of `qwixx_env.integrations.benchmarl.QwixxTask`. `QwixxTask.<TABLE>.get_from_yaml()` reads them,
and the command line (``python -m qwixx_env.integrations.benchmarl_run algorithm=mappo
task=qwixx/classic_3p``) puts this folder on Hydra's search path (`benchmarl.SEARCH_PATH`).
Data only: importing it imports nothing else."""
