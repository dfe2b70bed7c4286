"""A round of bulk appends and a full read of the store, timed and checked row for row.

A round appends `rows` kernel and `rows` variant predictions in one writer session, as many again
in a second, then opens the store and reads every table into DataFrames.
"""

from __future__ import annotations

import time
from pathlib import Path

from hybridtune.store.database import Store
from hybridtune.store.schema import TABLES
from hybridtune.store.store_errors import StoreError


def kernel_prediction(i: int) -> dict:
    return dict(key=f"{i:016x}", code_hash=f"{i % 300:064x}", machine_sha256="ab" * 32,
                region="L2", threads=1 + i % 20, model="ECM", kerncraft_version="0.8.18",
                osaca_version="0.7.1", n_sample=1000 + i, status="ok", message="",
                cycles_per_cl=12.5 + i, iterations_per_cl=8.0,
                contributions={"T_OL": 4.0, "T_nOL": 2.0, "L1L2": 3.0, "L2L3": 4.0, "L3MEM": 8.0},
                saturation_cores=4)


def variant_prediction(i: int) -> dict:
    return dict(scenario="default", method="radauIIA7", ivp="Cusp", n=10**6, threads=1 + i % 20,
                ranks=1, variant=f"F_RHS_LC_jli_{i}", predicted_s=1e-3 * i, t_com_s=1e-5, rank=i,
                model="ECM", breakdown={"LC": 1.0, "RHS": 2.0, "Update": 0.5},
                features={"predicted_s": 1e-3, "ecm_T_comp_s": 5e-4})


def one_round(path: Path, rows: int) -> dict:
    """Time one append-append-read round on a new store at `path`; fails if a row reads back wrong."""
    kernels = [kernel_prediction(i) for i in range(2 * rows)]
    variants = [variant_prediction(i) for i in range(2 * rows)]
    started = time.perf_counter()
    with Store.open(path, run={"command": "bench_store first"}) as store:
        store.append_many("kernel_predictions", kernels[:rows])
        store.append_many("variant_predictions", variants[:rows])
    appending = time.perf_counter() - started
    with Store.open(path, run={"command": "bench_store second"}) as store:
        store.append_many("kernel_predictions", kernels[rows:])
        store.append_many("variant_predictions", variants[rows:])
    started = time.perf_counter()
    with Store.open(path, "r") as reader:
        frames = {table: reader.frame(table) for table in TABLES}
    reading = time.perf_counter() - started
    kernel_frame, variant_frame = frames["kernel_predictions"], frames["variant_predictions"]
    last = 2 * rows - 1
    if not (len(kernel_frame) == len(variant_frame) == 2 * rows
            and kernel_frame.cycles_per_cl[last] == kernels[last]["cycles_per_cl"]
            and kernel_frame.contributions[last] == kernels[last]["contributions"]
            and variant_frame.variant[last] == variants[last]["variant"]
            and len(frames["runs"]) == 2):
        raise StoreError(f"{path} did not read back the {2 * rows} rows it was given")
    return {"append_s": appending, "read_s": reading,
            "rows_read": sum(len(frame) for frame in frames.values())}
