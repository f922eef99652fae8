"""Suggestions and search: similar phrasings, their sources and titles, templates, faceted search."""
