"""Grading, in four floors, each importing only those below it (tests/test_layers.py; docs/maintainers.md):
``storage/`` (what the grading folder keeps), ``exchange/`` (hand-ins and nbgrader's exchange), ``job/`` (one
submission's grading, on a worker) and ``commands/`` (what ``python -m autograder`` runs); beside them, the
words a student reads (``feedback_text.py``, ``locale/``)."""
