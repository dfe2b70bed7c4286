"""The exit codes of every command, in one place (docs/cli.md lists them)."""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_BAD_INPUT = 2          # a request refused, or an error of its input, with one line saying why
EXIT_INCOMPLETE = 3         # tune: the time limit came first: rerun to continue
EXIT_NO_CHOICE = 4          # a configuration ended without a ranked (predict) or measured choice
EXIT_INTERRUPTED = 128 + signal.SIGINT      # stopped by SIGINT (a signal's code is 128 + its number)
