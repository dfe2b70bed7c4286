#!/usr/bin/env bash
# Fit hybrid's no-model prior (the kernel effects) on the shipped ground truths' whole pools and
# write hybridtune/learn/kernel_effects.json. Options: --stores STORE...
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/ship_kernel_effects.py "$@"
