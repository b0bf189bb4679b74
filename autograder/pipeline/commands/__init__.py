"""What ``python -m autograder`` runs: collect, sanitize, grade, feedback, export, report."""
