"""The rhetorical role set, re-exported from :mod:`core.labels` (where ``core`` can use it)."""

from __future__ import annotations

from core.labels import ROLES, RolePrediction

__all__ = ["ROLES", "RolePrediction"]
