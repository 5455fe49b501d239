#!/usr/bin/env bash
# Creates .venv/ in the repo root and installs pipslab with every extra it uses.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# torch pinned to the CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[bench,dev]"
