"""A paper's labels: the analysis pipeline, its embedded vectors and a sentence's context."""
