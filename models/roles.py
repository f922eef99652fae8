"""The rhetorical role set, re-exported from :mod:`core.taxonomy.labels` (where ``core`` can use it)."""

from __future__ import annotations

from core.taxonomy.labels import ROLES, RolePrediction

__all__ = ["ROLES", "RolePrediction"]
