"""The grader's side of isolation: limits, the bubblewrap command line, the zygote client."""
