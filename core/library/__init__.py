"""The user's library: papers, sentences and their embeddings (SQLite) and the indexes over them."""
