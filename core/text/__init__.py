"""Text utilities: rule-based sentence splitting for scientific prose."""

from core.text.sentences import split_sentence_texts, split_sentences

__all__ = ["split_sentence_texts", "split_sentences"]
