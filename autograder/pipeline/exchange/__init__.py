"""Hand-ins: what one may hold, which file is which notebook, and nbgrader's exchange classes the course replaces."""
