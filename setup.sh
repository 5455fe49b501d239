#!/usr/bin/env bash
# Creates .venv/ in the repo root and installs what the main job (./run.sh) needs:
# pipslab itself, with the CPU build of torch.  ./test.sh adds the test extras.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# The CPU wheel of torch first: pipslab asks for a range (torch>=2.1,<3) that this wheel
# satisfies, and a torch resolved from the public index alone is a multi-GB CUDA build.
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  .venv/bin/python -m pip install -q "torch==2.13.0"
fi
.venv/bin/python -m pip install -q -e "."
