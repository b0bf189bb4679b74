"""The grading pipeline: one module per command (collect, sanitize, grade, feedback, export, report).

And the parts of ``grade``: one submission's job, cell limits, the static scan, the clean re-run.
"""
