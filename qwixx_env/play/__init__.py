"""Playing against the bots: the coach, the terminal game and the play page's server.

This layer sits above the arena and below the command line (docs/architecture.md); the
server's libraries come with the `play` extra.
"""
