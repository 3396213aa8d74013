"""Exercise checkers (filled in by the exercises issue)."""
