"""A step's communication on one rank: the bytes each %COM op sends for the layout, the barriers around it, and its seconds priced by the op's model."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridtune.describe.loader import load
from hybridtune.describe.skeleton import neighbour_form
from hybridtune.predict.collectives import ExchangeModel
from hybridtune.predict.hockney import HockneyFit, Piece
from hybridtune.predict.superstep import CommunicationModels, step_communication
from hybridtune.predict.variants import buffer_rows
SCENARIO = Path(__file__).resolve().parents[1] / "data" / "tune" / "mpi.scenario.yaml"


@pytest.fixture(scope="module")
def parts():
    scenario = load(SCENARIO, "scenario")
    method = scenario.methods[0]
    gathers = next(s for s in scenario.skeletons if s.name == "F-mpi")
    return scenario, method, gathers, neighbour_form(gathers)


def test_each_rank_sends_its_block_per_gathered_row_or_its_halo_and_one_rank_sends_nothing(parts):
    scenario, method, gathers, exchanges = parts
    m, s = method.corrector_steps, method.stages
    rows = buffer_rows(gathers, scenario.template_map, s)
    # F gathers y (one row) once and Ycur (s rows) after each of the m corrector sweeps
    exchanged_rows = 1 + m * s
    gathered = step_communication(gathers, m, rows, CommunicationModels(), 600, 2, 1)
    assert gathered.bytes == 8 * 300 * exchanged_rows
    assert gathered.barriers == 2 * (m + 1) and gathered.seconds == 0.0   # no model: no cost
    halo = step_communication(exchanges, m, rows, CommunicationModels(), 600, 2, 1, halo=4)
    assert halo.bytes == 8 * 4 * exchanged_rows
    assert step_communication(gathers, m, rows, CommunicationModels(), 600, 1, 1).bytes == 0.0


def test_the_op_model_prices_every_call_by_its_bytes(parts):
    scenario, method, gathers, _ = parts
    m, s = method.corrector_steps, method.stages
    rows = buffer_rows(gathers, scenario.template_map, s)
    fit = HockneyFit((Piece(0, 1e-6, 1e-9),), 0.0, 0.0, (), "known terms")
    models = CommunicationModels(exchanges={"mpi_allgather": ExchangeModel("mpi_allgather", fit, 2)})
    priced = step_communication(gathers, m, rows, models, 600, 2, 1)
    # one allgather call per row: (1 + m s) calls of 2400 bytes each
    assert priced.seconds == pytest.approx((1 + m * s) * (1e-6 + 2400 * 1e-9))

