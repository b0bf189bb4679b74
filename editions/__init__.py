"""Editions of the course in other languages: one source of code, translated prose.

English is the source. Each translated Markdown cell of ``solutions/`` is kept in
``editions/<language>/<assignment>.yaml``, keyed by the cell's id, with the hash of the English
text it translates, so a changed English cell shows up as a stale translation.
"""
