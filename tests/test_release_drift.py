"""notebooks/ must be exactly what `nbgrader generate_assignment` makes of solutions/ (`make release`)."""

import filecmp

from nbgrader.apps import NbGraderAPI

from autograder.course.course import Course


def test_release_equals_a_fresh_generation(assignment, throwaway_course):
    course = throwaway_course(assignment, release=False)
    result = NbGraderAPI(config=course.config()).generate_assignment(assignment)
    assert result["success"], result.get("error")
    fresh = course.release_folder(assignment)
    committed = Course.default().release_folder(assignment)
    # JupyterLab's checkpoints are git-ignored: opening the release with `make lab` is not drift.
    comparison = filecmp.dircmp(fresh, committed, ignore=[*filecmp.DEFAULT_IGNORES, ".ipynb_checkpoints"])
    assert not comparison.left_only and not comparison.right_only, "files differ: run `make release`"
    for name in comparison.common_files:
        assert (fresh / name).read_bytes() == (committed / name).read_bytes(), (
            f"{committed / name} differs from a fresh generation: edit solutions/, then run `make release`"
        )
