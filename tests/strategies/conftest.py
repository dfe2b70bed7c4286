"""Fixtures of the strategy tests."""

from learn_support import fixture_rows, fixture_store  # noqa: F401  (fixtures)
