"""The small stages behind check, variants, method and evaluate's checks, called directly."""

from __future__ import annotations

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.pipeline.description_check import check_file
from hybridtune.pipeline.evaluation_run import EvaluationRequest, check_evaluation
from hybridtune.pipeline.method_file import method_text, write_method
from hybridtune.pipeline.variant_listing import pool_rows, pool_summary

MPI_SCENARIO = PROJECT_ROOT / "scenarios" / "mpi.yaml"


def test_a_file_is_checked_by_its_kind_and_a_refusal_returned(tmp_path):
    checked = check_file(str(MPI_SCENARIO))
    assert (checked.kind, checked.name, checked.error) == ("scenario", "mpi", "")
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: method\nname: x\n")
    refused = check_file(str(broken))
    assert refused.kind == "" and refused.error and str(broken) in refused.error


def test_the_pool_listing_counts_barriers_and_communication(default_scenario):
    rows = pool_rows(default_scenario)
    assert len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        counts = row["communication_per_step"]
        mpi = sum(c for op, c in counts.items() if op.startswith("mpi_"))
        assert row["barriers_per_step"] == counts.get("omp_barrier", 0) + 2 * mpi
    assert pool_summary(default_scenario, rows).startswith(f"pool: {len(rows)} variants (")


def test_a_method_file_is_written_whole_and_a_family_checked(tmp_path):
    text = method_text("gauss", 2)
    assert "gauss4" in text
    write_method(str(tmp_path / "m.yaml"), text)
    assert (tmp_path / "m.yaml").read_text() == text
    with pytest.raises(HybridtuneError, match="method family 'euler': expected one of"):
        method_text("euler", 2)


@pytest.mark.parametrize("request_, message", [
    (EvaluationRequest("db", 0.0), "--stop 0: expected"),
    (EvaluationRequest("db", 0.5, noise_seeds=-1), "--noise-seeds -1: expected"),
    (EvaluationRequest("db", 0.5, strategies=False), "--no-strategies: expected"),
    (EvaluationRequest("db", 0.5, constants=True), "--constants: expected --other-host")])
def test_evaluate_refuses_what_would_evaluate_nothing(request_, message):
    with pytest.raises(RequestError, match=message):
        check_evaluation(request_)
