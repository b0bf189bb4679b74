"""The course's test suite: a package, so every shared module is imported by one unambiguous name."""
