"""The store's tables, each declared once as column name -> kind, and the schema version they make."""

from __future__ import annotations

from dataclasses import dataclass

FORMAT = "hybridtune-store"

# Changing the schema: declare the new column or table below and add 1 to SCHEMA_VERSION. A store file
# (or journal) written with any other schema_version is refused on open with a StoreVersionError that
# names the file, the version found and the version expected; nothing converts old files implicitly,
# so an old store stays readable by the hybridtune that wrote it and is never half-upgraded.
SCHEMA_VERSION = 2

KINDS = ("str", "int", "float", "bool", "json")


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    def kind(self, column: str) -> str:
        return dict(self.columns)[column]


def _table(name: str, /, **columns: str) -> Table:
    unknown = {column: kind for column, kind in columns.items() if kind not in KINDS}
    if unknown:
        raise ValueError(f"table {name}: unknown column kinds {unknown}; kinds are {KINDS}")
    return Table(name, tuple(columns.items()))


TABLES: dict[str, Table] = {table.name: table for table in (
    _table("runs",
           run_id="str", command="str", argv="json", host="str", machine_file="str",
           machine_sha256="str", compiler="str", compiler_flags="str", hybridtune_version="str",
           kerncraft_version="str", osaca_version="str", started_at="str", extra="json"),
    _table("kernels",
           code_hash="str", name="str", template="str", variant="str", ivp="str", method="str",
           code="str", run_id="str"),
    _table("kernel_predictions",
           key="str", code_hash="str", machine_sha256="str", region="str", cores="int",
           model="str", kerncraft_version="str", osaca_version="str", n_sample="int",
           status="str", message="str", cycles_per_cl="float", iterations_per_cl="float",
           contributions="json", saturation_cores="int", run_id="str"),
    _table("variant_predictions",
           scenario="str", method="str", ivp="str", n="int", cores="int", variant="str",
           predicted_s="float", t_com_s="float", rank="int", model="str", breakdown="json",
           run_id="str"),
    _table("prediction_sets",
           digest="str", scenario="str", method="str", ivp="str", n="int", cores="int",
           model="str", machine_sha256="str", variants="int", run_id="str"),
    _table("measurements",
           id="str", method="str", ivp="str", n="int", threads="int", status="str",
           median_s="float", ci_low_s="float", ci_high_s="float", ci_rel="float",
           repetitions="int", steps_per_repetition="int", check_error="float", message="str",
           node="str", source="str", run_id="str"),
    _table("comm_benchmarks",
           kind="str", threads="int", median_s="float", samples="json", run_id="str"),
    _table("comm_fits",
           kind="str", form="str", a="float", b="float", cv_error="float", validated="bool",
           data="json", run_id="str"),
)}


def schema_description() -> dict[str, dict[str, str]]:
    """The schema as plain data (table -> column -> kind), as written into every store file."""
    return {table.name: dict(table.columns) for table in TABLES.values()}
