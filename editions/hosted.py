"""``python -m editions.hosted``: the links cell and the setup cell (:mod:`tfcourse.hosted`) written into every
solution notebook at pyproject's version, and the README's notebook table given its Colab and Kaggle links.

Release-time code, beside the editions' release: the students' package only holds what their kernels run.
"""

import nbformat

from autograder.course import settings
from editions.release import edition_notebook
from tfcourse import hosted


def main() -> int:
    """``python -m editions.hosted``: stamp the solution notebooks (``make release`` then generates the releases)
    and write the README's links."""
    version = hosted.release_version()

    def release_path(name: str, edition: str) -> str:
        return edition_notebook(edition, name).relative_to(settings.REPO_ROOT).as_posix()  # English's included

    readme = settings.REPO_ROOT / "README.md"
    table = hosted.readme_with_links(readme.read_text(encoding="utf-8"), version, release_path)
    readme.write_text(table, encoding="utf-8")
    for assignment in settings.assignment_ids():
        path = settings.source_notebook(assignment)
        notebook = nbformat.read(path, as_version=4)
        release = settings.release_notebook(assignment).relative_to(settings.REPO_ROOT).as_posix()
        hosted.stamp(notebook, release, version, hosted.NEEDS.get(assignment, {}))
        path.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
