"""Code that runs inside the sandbox, in zygote children.

The zygote itself, the kernel stub, nbgrader's run and the clean re-run's runner.
"""
