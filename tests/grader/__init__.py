"""Tests of the instructor grader (``python -m autograder``)."""
