"""A Gradescope autograder for one notebook: the zip (:mod:`.build`), its run (:mod:`.run`) and results.json
(:mod:`.results_json`).

Gradescope unpacks the zip into ``/autograder/source``, runs its ``setup.sh`` once when it builds the image, then
``run_autograder`` for each submission, with the student's files in ``/autograder/submission``, and reads
``/autograder/results/results.json`` ("Autograder Specifications",
https://gradescope-autograders.readthedocs.io/en/latest/specs/). The settings are read here and only here.
"""

import os
from pathlib import Path

from autograder.course import settings

# Beside setup.sh in the zip: which assignment and which limits run_autograder grades with.
PLAN_FILE = "gradescope.json"
REQUIREMENTS_FILE = "requirements-gradescope.txt"
LOCK_FILE = "requirements-lock.txt"
REQUIREMENTS = settings.GRADESCOPE_REQUIREMENTS
_DECLARED = settings.GradescopeSettings()  # its defaults: the variables are the scripts' to read, on Gradescope
TORCH_INDEX, TORCH_INDEX_VARIABLE = _DECLARED.trait_defaults("torch_index"), _DECLARED.variable("torch_index")
ROOT, ROOT_VARIABLE = _DECLARED.trait_defaults("root"), _DECLARED.variable("root")


def gradescope_root() -> Path:
    """Gradescope's ``/autograder``, or the folder that stands for it (a test's simulated tree)."""
    return Path(os.environ.get(ROOT_VARIABLE) or ROOT)
