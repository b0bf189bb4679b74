"""nbgrader's stamp for a new gradebook, read in this process instead of by an ``alembic heads`` subprocess.

Creating a gradebook, nbgrader (``nbgrader.api.get_alembic_version``) runs the ``alembic heads``
command: a new Python that imports nbgrader again, 3.2 s on the idle 2-core course machine
(3.8 s of CPU) for one 12-character revision id. ``grade`` created two or three new gradebooks before its
first job (the template, and one in each nbgrader zygote's warm-up), all while the zygotes
imported torch. The head belongs to the installed nbgrader: alembic's own
``ScriptDirectory`` reads it from the same migration scripts, through the same ini file, in
0.1 s, and it is read once per process.
"""

import functools

import nbgrader.api
from alembic.config import Config
from alembic.script import ScriptDirectory
from nbgrader.dbutil import _temp_alembic_ini

NBGRADER_OWN = nbgrader.api.get_alembic_version  # the subprocess version, kept for the test that compares


@functools.cache
def alembic_head() -> str:
    """The revision id nbgrader stamps a new gradebook with (what ``alembic heads`` prints first)."""
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:  # the URL nbgrader's own call passes
        head = ScriptDirectory.from_config(Config(ini)).get_current_head()
    if head is None:
        raise RuntimeError("nbgrader's alembic scripts name no head revision")
    return head


def use_in_process_alembic_head() -> None:
    """Make nbgrader's gradebooks, in this process and its forks, ask :func:`alembic_head`."""
    nbgrader.api.get_alembic_version = alembic_head
