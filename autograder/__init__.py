"""Instructor tooling: the nbgrader configuration and helpers to read graded notebooks."""
