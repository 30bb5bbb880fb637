"""General-sum two-player matrix games (GAMES.md section 4)."""
