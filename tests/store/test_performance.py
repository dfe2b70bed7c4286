"""Bulk appends of predictions and reading a 50,000-row store stay well inside their time budgets."""

from __future__ import annotations

import time

from hybridtune.store import TABLES, Store


def kernel_prediction(i: int) -> dict:
    return dict(key=f"{i:016x}", code_hash=f"{i % 300:064x}", machine_sha256="ab" * 32,
                region="L2", cores=1 + i % 20, model="ECM", kerncraft_version="0.8.18",
                osaca_version="0.7.1", n_sample=1000 + i, status="ok", message="",
                cycles_per_cl=12.5 + i, iterations_per_cl=8.0,
                contributions={"T_OL": 4.0, "T_nOL": 2.0, "L1L2": 3.0, "L2L3": 4.0, "L3MEM": 8.0},
                saturation_cores=4)


def variant_prediction(i: int) -> dict:
    return dict(scenario="default", method="radauIIA7", ivp="Cusp", n=10**6, cores=1 + i % 20,
                variant=f"F_RHS_LC_jli_{i}", predicted_s=1e-3 * i, t_com_s=1e-5, rank=i,
                model="ECM", breakdown={"LC": 1.0, "RHS": 2.0, "Update": 0.5})


def test_bulk_appends_and_reading_fifty_thousand_rows_are_fast(tmp_path):
    path = tmp_path / "s.h5"
    kernels = [kernel_prediction(i) for i in range(25000)]
    variants = [variant_prediction(i) for i in range(25000)]
    started = time.perf_counter()
    with Store.open(path, run={"command": "predict"}) as store:
        store.append_many("kernel_predictions", kernels[:10000])
        store.append_many("variant_predictions", variants[:10000])
    appending = time.perf_counter() - started
    assert appending < 2.5, f"10,000 + 10,000 predictions took {appending:.2f} s"

    with Store.open(path, run={"command": "predict more"}) as store:
        store.append_many("kernel_predictions", kernels[10000:])
        store.append_many("variant_predictions", variants[10000:])
    started = time.perf_counter()
    with Store.open(path, "r") as reader:
        frames = {table: reader.frame(table) for table in TABLES}
    reading = time.perf_counter() - started
    assert reading < 1.0, f"opening and reading 50,000 rows took {reading:.2f} s"
    assert len(frames["kernel_predictions"]) == len(frames["variant_predictions"]) == 25000
    assert frames["kernel_predictions"].contributions[24999]["L3MEM"] == 8.0
    assert frames["variant_predictions"].variant[24999] == "F_RHS_LC_jli_24999"
