"""Compiled decision kernels over the core `State`: the scripted policies (random, greedy,
heuristic), the heuristic's evaluation, search playouts, the learned win-chance features and
afterstate ratings. They read the rules from `qwixx_env.core` and implement none; the bots in
`qwixx_env.bots` wrap them in the `act(observation)` interface."""
