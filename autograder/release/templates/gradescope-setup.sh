#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image: Python 3.11, the grader's locked
# environment (CPU torch included), the grader.
# AUTOGRADER_ROOT (default /autograder) lets a test build the image in a folder of its own, and
# AUTOGRADER_TORCH_INDEX_URL replaces the CPU wheels' index (set but empty: pip's own configuration).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
TORCH_INDEX_URL="${AUTOGRADER_TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}"
LOCK="$ROOT/source/grader/autograder/requirements.lock"  # every version pinned with its hashes: CPython 3.11
PYTHON=python3.11
if ! command -v python3.11 >/dev/null; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv
fi
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install --require-hashes --no-deps -r "$LOCK" ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"}
"$ROOT/venv/bin/python" -m pip install --no-deps "$ROOT/source/grader"  # installed, not editable: the venv's own copy
"$ROOT/venv/bin/python" -m pip check  # the lock holds everything the grader requires
# The reference's scikit-learn answers, asked once here and kept in the venv for every grading (checks/memo.py)
"$ROOT/venv/bin/python" -I -m autograder.checks.remember
