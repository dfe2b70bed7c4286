"""Fixtures of the face tests."""

from tune_support import predicted_store, tune_store  # noqa: F401  (fixtures)
