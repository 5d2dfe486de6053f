"""Drafters: model-free lookup, a same-tokenizer model, and another tokenizer's model."""
