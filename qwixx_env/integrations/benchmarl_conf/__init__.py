"""BenchMARL's config folder for the Qwixx task: ``task/qwixx/<table>.yaml``, one file per member
of `qwixx_env.integrations.benchmarl.QwixxTask`. `QwixxTask.<TABLE>.get_from_yaml()` reads them,
and BenchMARL's own command line finds them through the Hydra search-path plugin this package
ships (``hydra_plugins/qwixx_env_benchmarl``): ``python -m benchmarl.run algorithm=mappo
task=qwixx/classic_3p``. Data only: importing it imports nothing else."""
