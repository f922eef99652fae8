"""A paper's or a draft's analysis as files: JSON, CSV, Markdown, HTML, BibTeX, RIS."""
