"""The course's public address, read from the installed package's metadata (``pyproject.toml``'s project URLs).

``pyproject.toml`` states the address once; links, the hosted setup cell and the citation read it here, so that
moving the repository changes one line.
"""

from importlib.metadata import metadata


def repository_url() -> str:
    """The course repository's address (``[project.urls] Repository``), without a trailing slash."""
    for entry in metadata("tfcourse").get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip() == "Repository":
            return url.strip().rstrip("/")
    raise LookupError("pyproject.toml has no [project.urls] Repository: reinstall the course (make install)")
