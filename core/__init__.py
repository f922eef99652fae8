"""Rhetorica core: document model, PDF ingestion, sentence splitting, analysis.

No Qt and no torch may be imported from this package.
"""
