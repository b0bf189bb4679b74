"""The course's grader: ``python -m autograder`` (cli.py) and its benchmark (benchmark.py).

- ``course/``: what the course is (folders, nbgrader settings, which cells are answers and tests);
- ``pipeline/``: grading: what the grading folder keeps, the hand-ins, one submission's job, the commands;
- ``launch/``: the grader's side of isolation (limits, the sandbox command, the zygote client);
- ``isolated/``: the code that runs inside the sandbox, in zygote children.
"""
