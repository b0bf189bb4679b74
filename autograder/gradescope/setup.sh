#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image ("Autograder Specifications",
# https://gradescope-autograders.readthedocs.io/en/latest/specs/); its default base image is Ubuntu 22.04
# (https://gradescope-autograders.readthedocs.io/en/latest/base_images/), whose python3 is 3.10: the course
# needs 3.11 or later. `python -m autograder gradescope` writes it into the zip, its names filled in.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$SOURCE/.venv"
# PyTorch's own index of CPU builds for the pinned torch (no CUDA libraries on a CPU-only grader); an empty value
# leaves pip's configured sources (a local wheel in the course's own test).
TORCH_INDEX="${TORCH_INDEX_VARIABLE-TORCH_INDEX_DEFAULT}"
pick_python() { command -v python3.11 || command -v python3.12 || command -v python3.13 || true; }
if [ -z "$(pick_python)" ]; then
    apt-get update -qq && apt-get install -y -qq python3.11 python3.11-venv
fi
PYTHON="$(pick_python)"
if ! "$PYTHON" -c 'import ensurepip' 2>/dev/null; then
    apt-get update -qq && apt-get install -y -qq "$(basename "$PYTHON")-venv"
fi
# bubblewrap: the grader's sandbox, which hides the hidden tests from student code (where the container allows it)
command -v bwrap >/dev/null || { apt-get update -qq && apt-get install -y -qq bubblewrap; } || true
test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} "$(grep '^torch==' "$SOURCE/REQUIREMENTS_FILE")"
"${PIP[@]}" -r "$SOURCE/REQUIREMENTS_FILE" -c "$SOURCE/LOCK_FILE"
# Grades the reference answers once: the image is refused unless they get full marks, and each cell's time limit
# follows their times on this very machine (kept in grading/, as `grade` keeps them).
cd "$SOURCE" && "$VENV/bin/python" -m autograder.gradescope.run --prepare
