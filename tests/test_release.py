"""Versions: every released version is tagged, and what is graded never changes under a version's number.

A clone carries the version tags (``vX.Y.Z``) when it was made with them (``git clone`` fetches them; a CI that
clones with ``--no-tags``, or a shallow fetch, does not). Where this clone has none, the checks that read tags say so
by skipping, with the reason, rather than passing on nothing; the checks that need no tag run in every clone.
"""

import re
import zipfile
from pathlib import Path

import pytest

from autograder.course import graded_versions
from autograder.course.settings import REPO_ROOT
from tests.test_licence import RELEASE_HEADING

VERSIONS = graded_versions.version_tags()
NO_TAGS = "this clone carries no version tag (made without tags): `git fetch --tags` to check them"


def released_versions() -> list[str]:
    """The versions CHANGELOG.md dates, newest first."""
    return [version for version, _ in RELEASE_HEADING.findall((REPO_ROOT / "CHANGELOG.md").read_text())]


def test_what_is_graded_is_what_the_current_version_recorded():
    version = graded_versions.project_version()
    recorded = graded_versions.recorded()
    assert version in recorded, (
        f"no fingerprint of what version {version} grades: run `python -m autograder.course.graded_versions`"
    )
    assert graded_versions.fingerprint(graded_versions.notebooks_on_disk()) == recorded[version], (
        f"what solutions/ grades (graded and test cells, their points) changed since version {version} was "
        "recorded: a change to what is graded needs a new version (docs/maintainers.md, Releasing a version); "
        "where this version is not released yet, record it again: python -m autograder.course.graded_versions"
    )


def test_every_dated_version_has_a_recorded_fingerprint_and_nothing_else_does():
    assert set(graded_versions.recorded()) == set(released_versions())


def test_the_fingerprint_sees_points_tests_and_stubs_but_not_reference_answers():
    path, text = next(iter(sorted(graded_versions.notebooks_on_disk().items())))
    before = graded_versions.fingerprint({path: text})
    answer = re.search(r"### BEGIN SOLUTION\\n", text)
    assert answer, f"{path} has no solution region"
    rewritten = text[: answer.end()] + "    # another way to write the model answer\\n" + text[answer.end() :]
    assert graded_versions.fingerprint({path: rewritten}) == before
    points = re.search(r'"points": (\d+)', text)
    more_points = text[: points.start(1)] + str(int(points.group(1)) + 1) + text[points.end(1) :]
    assert graded_versions.fingerprint({path: more_points}) != before
    hidden = text.replace("### BEGIN HIDDEN TESTS\\n", "### BEGIN HIDDEN TESTS\\n    assert True\\n", 1)
    assert hidden != text and graded_versions.fingerprint({path: hidden}) != before


def test_recording_refuses_to_change_a_released_version_s_fingerprint(tmp_path: Path):
    record = tmp_path / "graded_versions.json"
    assert graded_versions.record("2.0.0", "a" * 64, released=False, path=record)
    assert graded_versions.record("2.0.0", "b" * 64, released=False, path=record)  # not yet released: re-recorded
    assert graded_versions.record("2.0.0", "b" * 64, released=True, path=record)  # unchanged: fine
    assert not graded_versions.record("2.0.0", "c" * 64, released=True, path=record)
    assert graded_versions.recorded(record) == {"2.0.0": "b" * 64}


def test_every_released_version_is_tagged_at_a_commit_of_that_version():
    """All but the newest must be tagged; the newest is tagged by the procedure's last step, after `make test`."""
    if not VERSIONS:
        pytest.skip(NO_TAGS)
    newest, *older = released_versions()
    untagged = [version for version in older if version not in VERSIONS]
    assert not untagged, f"released versions without a tag v<version>: {untagged} (docs/maintainers.md)"
    for version in {newest, *older} & VERSIONS:
        at_tag = graded_versions.git("show", f"v{version}:pyproject.toml")
        assert f'\nversion = "{version}"\n' in at_tag, f"tag v{version} is on a commit of another version"


def test_each_tagged_version_recorded_what_its_tag_grades():
    if not VERSIONS:
        pytest.skip(NO_TAGS)
    recorded = graded_versions.recorded()
    for version in sorted(VERSIONS & set(recorded)):
        at_tag = graded_versions.fingerprint(graded_versions.notebooks_at(f"v{version}"))
        assert at_tag == recorded[version], f"graded_versions.json's {version} is not what tag v{version} grades"


def test_the_release_procedure_records_the_fingerprint_and_tags_the_version():
    procedure = (REPO_ROOT / "docs" / "maintainers.md").read_text().split("## Releasing a version", 1)[1]
    procedure = procedure.split("\n## ", 1)[0]
    assert "python -m autograder.course.graded_versions" in procedure
    assert 'git tag -a vX.Y.Z -m "Version X.Y.Z"' in procedure


def test_the_kit_names_the_current_version_only(tmp_path: Path):
    from classroom import student_kit

    version = graded_versions.project_version()
    stale = tmp_path / f"{student_kit.NAME}-0.9.0.zip"
    stale.write_bytes(b"an older kit")
    kit = student_kit.build(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"{student_kit.NAME}-{version}.zip"]
    with zipfile.ZipFile(kit) as archive:
        top = f"{student_kit.NAME}-{version}/"
        assert all(name.startswith(top) for name in archive.namelist())
        readme = archive.read(top + "README.md").decode()
        package = archive.read(top + "tfcourse/__init__.py").decode()
        project = archive.read(top + "pyproject.toml").decode()
    assert readme.splitlines()[0].endswith(f"student kit {version}")
    assert f'__version__ = "{version}"' in package
    assert f'version = "{version}"' in project
