"""Licences, citation and version: what an instructor needs to adopt the course, and one version everywhere.

The code is under MIT (``LICENSE``), the content under CC BY 4.0 (``LICENSE-CONTENT``, Creative
Commons' plain-text legal code, unedited); ``CITATION.cff``, ``pyproject.toml``,
``tfcourse.__version__`` and the newest dated entry of ``CHANGELOG.md`` name the same version.
"""

import datetime
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import distribution

import yaml

import tfcourse
from autograder.course.settings import REPO_ROOT
from tfcourse.project import repository_url

HOLDER = "The Transformers-from-scratch course authors"
# sha256 of Creative Commons' legalcode.txt for CC BY 4.0: the legal code is copied, never edited.
CC_BY_4_0_SHA256 = "fd3a263fe19ed8faa9068b43abaebafc02c77897b0c6fc09abc04bb592e5f16e"
CC_BY_SECTIONS = [
    "Section 1 -- Definitions.",
    "Section 2 -- Scope.",
    "Section 3 -- License Conditions.",
    "Section 4 -- Sui Generis Database Rights.",
    "Section 5 -- Disclaimer of Warranties and Limitation of Liability.",
    "Section 6 -- Term and Termination.",
    "Section 7 -- Other Terms and Conditions.",
    "Section 8 -- Interpretation.",
]
# A dated Keep a Changelog heading: ## [1.0.0] - 2026-11-28
RELEASE_HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", re.M)


def pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def pyproject_packages() -> list[str]:
    """The top-level packages pyproject.toml ships (``tfcourse*`` -> ``tfcourse``)."""
    found = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    return [pattern.rstrip("*") for pattern in found["include"]]


def citation() -> dict:
    return yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text())


def test_the_code_is_under_mit_in_the_holders_name():
    text = (REPO_ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n"), "LICENSE should be the MIT licence"
    assert f"Copyright (c) 2026 {HOLDER}\n" in text, "LICENSE should name the copyright holder"
    assert "Permission is hereby granted, free of charge" in text, "LICENSE lacks the MIT permission notice"
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text, "LICENSE lacks the MIT disclaimer"
    assert pyproject()["license"] == "MIT", "pyproject.toml's licence should be MIT, as LICENSE says"


def test_the_content_is_under_cc_by_4_0_as_published():
    text = (REPO_ROOT / "LICENSE-CONTENT").read_text(encoding="utf-8")
    assert text.splitlines()[0] == "Attribution 4.0 International", f"LICENSE-CONTENT's title: {text.splitlines()[0]}"
    assert "\nCreative Commons Attribution 4.0 International Public License\n" in text
    headings = [line for line in text.splitlines() if line.startswith("Section ")]
    assert headings == CC_BY_SECTIONS, f"LICENSE-CONTENT's sections: {headings}"
    assert not re.search(r"ShareAlike|NonCommercial|NoDerivatives", text), "another CC licence, not CC BY"
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == CC_BY_4_0_SHA256, "the legal code was edited"


def test_the_citation_file_holds_what_cff_1_2_0_requires():
    cff = citation()
    missing = {"cff-version", "message", "title", "authors"} - cff.keys()
    assert not missing, f"CITATION.cff lacks {sorted(missing)}"
    assert cff["cff-version"] == "1.2.0"
    assert cff["title"] == "Transformers from scratch, auto-graded" and cff["type"] == "software"
    assert cff["authors"] == [{"name": HOLDER}]
    assert cff["license"] == ["MIT", "CC-BY-4.0"]
    assert isinstance(cff["date-released"], datetime.date) and cff["abstract"] and cff["keywords"]


def test_one_version_everywhere():
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text()
    releases = RELEASE_HEADING.findall(changelog)
    assert releases, "CHANGELOG.md has no dated entry (## [X.Y.Z] - YYYY-MM-DD)"
    newest, released = releases[0]
    cff = citation()
    versions = {
        "pyproject.toml": pyproject()["version"],
        "tfcourse.__version__": tfcourse.__version__,
        "CITATION.cff": cff["version"],
        "CHANGELOG.md's newest entry": newest,
    }
    assert set(versions.values()) == {newest}, f"the versions differ: {versions}"
    assert str(cff["date-released"]) == released, "CITATION.cff's date-released should be the entry's date"


def test_the_readme_says_which_licence_covers_what():
    readme = (REPO_ROOT / "README.md").read_text()
    section = re.search(r"^## Licence\n(.*?)(?=^## )", readme, re.M | re.S)
    assert section, "README.md has no '## Licence' section"
    for link in ("](LICENSE)", "](LICENSE-CONTENT)", "](CITATION.cff)"):
        assert link in section.group(1), f"README's Licence section should link {link[2:-1]}"


HOSTED = ("https://colab.research.google.com/github/", "https://kaggle.com/kernels/welcome?src=")


def test_the_course_s_address_is_pyproject_s_wherever_it_is_written():
    address = repository_url()
    assert citation()["repository-code"] == address, "CITATION.cff's repository-code should be pyproject.toml's"
    licence = re.search(r"^## Licence\n(.*?)(?=^## )", (REPO_ROOT / "README.md").read_text(), re.M | re.S).group(1)
    assert f"<{address}>" in licence, "README's attribution line should link the repository's address"
    name = address.rsplit("/", 1)[1]
    owner_and_name = "/".join(address.rsplit("/", 2)[-2:])  # what Colab's and Kaggle's links to it carry
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "CITATION.cff", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    for page in pages:
        for url in re.findall(rf"https?://[^\s)>\"']*/{re.escape(name)}\b[^\s)>\"']*", page.read_text()):
            where = url.startswith(address) or (url.startswith(HOSTED) and f"/{owner_and_name}/" in url)
            assert where, f"{page.name} links the course at {url}, not at {address}"


def test_nbgrader_s_notice_ships_with_the_template_adapted_from_it(tmp_path):
    """The BSD-3 notice in full (nbgrader's own LICENSE, as installed), and in the wheel beside the template."""
    template = REPO_ROOT / "autograder/course/templates/formgrade"
    notice = (template / "LICENSE-nbgrader.txt").read_text()
    installed = distribution("nbgrader")
    (licence,) = [path for path in installed.files if path.name == "LICENSE" and "licenses" in path.parts]
    assert notice == installed.locate_file(licence).read_text(), "LICENSE-nbgrader.txt is not nbgrader's notice"
    source = tmp_path / "source"  # a copy: a build in the repository would rewrite its tfcourse.egg-info
    source.mkdir()
    data_files = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped_data = [name for names in data_files.values() for name in names]
    for name in ("pyproject.toml", "LICENSE", *pyproject_packages(), *shipped_data):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        if (REPO_ROOT / name).is_dir():
            shutil.copytree(REPO_ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(REPO_ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path), str(source)], check=True, timeout=300)
    (wheel,) = tmp_path.glob("tfcourse-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for name in ("index.html.j2", "LICENSE-nbgrader.txt"):
        assert f"autograder/course/templates/formgrade/{name}" in shipped, f"the wheel lacks the template's {name}"
    assert "[LICENSE-nbgrader.txt](autograder/course/templates/formgrade/LICENSE-nbgrader.txt)" in (
        REPO_ROOT / "README.md"
    ).read_text(), "README's licence section should name nbgrader's notice"


def test_every_page_names_the_measuring_machine_as_the_measurements_page_does():
    """One 2-core machine; a CPU model appears only where the measurements page says that model was read."""
    models = re.compile(r"Xeon|EPYC|Ryzen|Opteron|Core i\d|Graviton|Neoverse")
    machine = next(line for line in (REPO_ROOT / "docs/measurements.md").read_text().splitlines()
                   if line.startswith("| 2-core CPU |"))
    read = set(models.findall(machine))
    measured = json.loads((REPO_ROOT / "classroom/k8s/peak_memory.json").read_text())["machine"]["cpu_model"]
    assert set(models.findall(measured)) <= read, f"peak_memory.json's {measured} is not on the measurements page"
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "CHANGELOG.md", REPO_ROOT / "classroom/k8s/README.md",
             *(REPO_ROOT / "docs").glob("*.md"), *(REPO_ROOT / "book").rglob("*.md")]
    for page in pages:
        named = set(models.findall(page.read_text(encoding="utf-8"))) - read
        assert not named, f"{page.relative_to(REPO_ROOT)} names the machine {named}: docs/measurements.md says {read}"
