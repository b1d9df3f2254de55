#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image: Python 3.11+, CPU torch, the grader.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv
    PYTHON=python3.11
fi
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
"$ROOT/venv/bin/python" -m pip install "$ROOT/source/grader"
