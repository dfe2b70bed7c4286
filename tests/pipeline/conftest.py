"""Fixtures of the pipeline tests."""

from learn_support import fixture_store  # noqa: F401  (fixtures)
from scaling_support import scaling_run, simgrid  # noqa: F401  (fixtures)
from tune_support import predicted_store, tune_store  # noqa: F401  (fixtures)
