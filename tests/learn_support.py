"""The learning and strategy tests' fixture store (skeleton F on four IVPs, every variant measured), read once."""

from __future__ import annotations

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.learn.table import joined_rows
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"


@pytest.fixture(scope="session")
def fixture_rows():
    """The fixture's learning rows: 256 predictions with feature rows, each joined to its measurement."""
    with Store.open(FIXTURE, "r") as store:
        return joined_rows(store.frame("variant_predictions"), store.frame("measurements"))


@pytest.fixture(scope="session")
def fixture_store():
    """The fixture store's path (read it; copy it before writing)."""
    return FIXTURE
