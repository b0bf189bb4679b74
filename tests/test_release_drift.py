"""notebooks/ must be exactly what `nbgrader generate_assignment` makes of solutions/ (`make release`)."""

import filecmp
import shutil

from nbgrader.apps import NbGraderAPI

from autograder.course import settings


def test_release_equals_a_fresh_generation(assignment, tmp_path):
    shutil.copytree(settings.source_notebook(assignment).parent, tmp_path / settings.SOURCE_DIRECTORY / assignment)
    result = NbGraderAPI(config=settings.course_config(tmp_path)).generate_assignment(assignment)
    assert result["success"], result.get("error")
    fresh = tmp_path / settings.RELEASE_DIRECTORY / assignment
    committed = settings.REPO_ROOT / settings.RELEASE_DIRECTORY / assignment
    # JupyterLab's checkpoints are git-ignored: opening the release with `make lab` is not drift.
    comparison = filecmp.dircmp(fresh, committed, ignore=[*filecmp.DEFAULT_IGNORES, ".ipynb_checkpoints"])
    assert not comparison.left_only and not comparison.right_only, "files differ: run `make release`"
    for name in comparison.common_files:
        assert (fresh / name).read_bytes() == (committed / name).read_bytes(), (
            f"{committed / name} differs from a fresh generation: edit solutions/, then run `make release`"
        )
