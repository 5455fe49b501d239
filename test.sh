#!/usr/bin/env bash
# Run the whole test suite (creates .venv/ first if it is missing).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/pipslab ]; then bash setup.sh; fi
exec .venv/bin/python -m pytest "$@"
