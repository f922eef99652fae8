"""Graphical-abstract candidates: figure features, the ranking and its fitted weights."""
