"""Benchmarks run by hand (not timed tests): ``python -m benchmarks.ag_news``.

Kept out of the helper package students get: the AG News benchmark holds a working tokenizer,
vocabulary, collate function and classifier, which are notebook 06's exercises.
"""
