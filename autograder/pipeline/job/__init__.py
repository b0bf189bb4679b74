"""One submission's grading on a worker (runner.py): read and scan, the kernel run, the clean re-run, the verdict."""
