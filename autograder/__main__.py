"""``python -m autograder``: the instructor's command line (see :mod:`autograder.cli`)."""

import sys

from autograder.cli import main

sys.exit(main())
