#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image: Python 3.11+, CPU torch, the grader.
# AUTOGRADER_ROOT (default /autograder) lets a test build the image in a folder of its own, and
# AUTOGRADER_TORCH_INDEX_URL replaces the CPU wheels' index (set but empty: pip's own configuration).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
TORCH_INDEX_URL="${AUTOGRADER_TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}"
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv
    PYTHON=python3.11
fi
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install torch==2.13.0 ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
"$ROOT/venv/bin/python" -m pip install "$ROOT/source/grader"  # installed, not editable: the venv's own copy
