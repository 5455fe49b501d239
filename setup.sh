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
# The play page's browser test (tests/experiments/test_serve.py) drives Debian's chromium
# through its chromium-driver; installed here when missing (as root, or with sudo -n).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi
    { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
        chromium chromium-driver fonts-dejavu-core; } \
      || echo "setup.sh: could not install chromium and chromium-driver with apt-get; the play page's browser test will fail until they are installed" >&2
  else
    echo "setup.sh: apt-get is not available: install chromium and its chromedriver by hand (the play page's browser test needs them)" >&2
  fi
fi
