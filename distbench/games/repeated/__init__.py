"""Repeated games (GAMES.md section 5)."""
