#!/usr/bin/env bash
# Set up .venv/ and run the main job: a quick tournament on the embedded default
# (Happy block dominoes, heuristic agents against random); prints its table, writes results/.
set -euo pipefail
cd "$(dirname "$0")"
bash setup.sh
exec .venv/bin/pipslab tournament "$@"
