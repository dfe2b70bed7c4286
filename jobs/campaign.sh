#!/usr/bin/env bash
# The two-pass ground-truth campaign on this host (jobs/campaign.py says what it writes); resumable:
# rerun the same command after a kill. Run from the project folder:
#   jobs/campaign.sh --machine data/machines/host.yml [--scenario S] [--out DIR] [--ci C] [--budget B]
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-.venv/bin/python}" jobs/campaign.py "$@"
