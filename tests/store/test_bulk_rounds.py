"""A bulk round on the store: two writer sessions appended, everything read back and checked."""

from hybridtune.store.bulk_rounds import kernel_prediction, one_round, variant_prediction


def test_a_round_appends_twice_and_reads_every_row_back(tmp_path):
    found = one_round(tmp_path / "round.h5", 50)
    assert found["append_s"] > 0 and found["read_s"] > 0
    assert found["rows_read"] >= 4 * 50 + 2          # the predictions and two run records


def test_the_rows_differ_row_by_row():
    assert kernel_prediction(1)["key"] != kernel_prediction(2)["key"]
    assert variant_prediction(3)["variant"].endswith("_3")
