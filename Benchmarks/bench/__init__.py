"""Ferry's benchmark: the harness (servers, agents, tables) and a module a case (cases/)."""
