#!/usr/bin/env bash
# Run the whole test suite (creates .venv/ first if it is missing); arguments go to pytest:
#   ./test.sh -m "not slow"     the quick loop (no test over about 2 s)
#   ./test.sh -m "not peers"    without the [bench] extra (open-spiel, gnubg-nn, dominoes)
set -euo pipefail
cd "$(dirname "$0")"
# (again when the venv predates a test dependency, such as pytest-xdist)
if [ ! -x .venv/bin/pipslab ] || ! .venv/bin/python -c "import xdist" 2>/dev/null; then bash setup.sh; fi
# On every core: pytest-xdist's worker processes (-n auto; PIPSLAB_TEST_WORKERS=0 runs in this
# one process, or pass -n N); tests marked xdist_group(NAME) share one worker (--dist loadgroup).
exec .venv/bin/python -m pytest -n "${PIPSLAB_TEST_WORKERS:-auto}" --dist loadgroup "$@"
