"""What a student's Python environment needs, pinned: the student kit's ``requirements.txt``, and what
``python -m classroom.install --students`` and the TLJH plugin install into an existing hub's users' environment."""

from classroom.provision import pinned_name, pins_of

# What the helper package and the notebooks import (their other imports come with these, pinned by the lock), JupyterLab
# and its kernel, and nbgrader for the Validate button and the Assignments tab.
STUDENT_PACKAGES = (
    "torch", "numpy", "pandas", "matplotlib", "seaborn", "babel", "noto-cjk-sans-otc", "tqdm",
    "jupyterlab", "notebook", "ipykernel", "ipywidgets", "nbgrader",
)


def requirements() -> str:
    """The repository's pins of ``STUDENT_PACKAGES``, one a line."""
    pins = {pinned_name(line): line for line in pins_of("requirements.txt")}
    missing = [name for name in STUDENT_PACKAGES if name not in pins]
    if missing:
        raise KeyError(f"requirements.txt pins no version of {missing}: a student's environment pins what it pins")
    header = "# What a student's environment needs; constraints.txt (the lock) pins everything these bring along.\n"
    return header + "".join(f"{pins[name]}\n" for name in STUDENT_PACKAGES)
