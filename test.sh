#!/usr/bin/env bash
# Run the whole test suite (creates .venv/ first if it is missing); arguments go to pytest:
#   ./test.sh -m "not slow"     the quick loop (no test over about 2 s)
#   ./test.sh -m "not peers"    without the [bench] extra (open-spiel, gnubg-nn, dominoes)
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/pipslab ]; then bash setup.sh; fi
exec .venv/bin/python -m pytest "$@"
