"""The store's tables, each declared once as column name -> kind, and the schema version they make."""

from __future__ import annotations

from dataclasses import dataclass

FORMAT = "hybridtune-store"

# Changing the schema: declare the new column or table below, add 1 to SCHEMA_VERSION and register the
# step from the previous version in store/upgrade.py. A store file (or journal) written with any other
# schema_version is refused on open with a StoreVersionError that names the file, both versions and
# the upgrade command; nothing converts old files implicitly, upgrade_store writes a new file.
SCHEMA_VERSION = 5

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

    def only(self, names) -> Table:
        """This table with only the named columns, in the table's order."""
        return Table(self.name, tuple((n, k) for n, k in self.columns if n in set(names)))


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
           key="str", code_hash="str", machine_sha256="str", region="str", threads="int",
           model="str", kerncraft_version="str", osaca_version="str", n_sample="int",
           status="str", message="str", cycles_per_cl="float", iterations_per_cl="float",
           contributions="json", saturation_cores="int", run_id="str"),
    _table("variant_predictions",
           scenario="str", method="str", ivp="str", n="int", threads="int", ranks="int",
           variant="str", predicted_s="float", t_com_s="float", rank="int", model="str", breakdown="json",
           features="json", run_id="str"),
    _table("prediction_sets",
           digest="str", scenario="str", method="str", ivp="str", n="int", threads="int",
           ranks="int", model="str", machine_sha256="str", variants="int", run_id="str"),
    # A row has its own row_id (a uuid4 hex its writer gives it) and records what makes it valid:
    # the code (hash of the generated C, the generator's version), the build (digest of compiler
    # version, flags and what -march=native resolved to), the hardware (digest of the CPU identity;
    # model, flags digest and cache sizes as JSON) and what was asked for (ci_target, budget_s).
    _table("measurements",
           row_id="str", id="str", method="str", ivp="str", n="int", threads="int", ranks="int",
           nodes="int", status="str",
           median_s="float", ci_low_s="float", ci_high_s="float", ci_rel="float",
           ci_target="float", budget_s="float", timing="str", repetitions="int",
           steps_per_repetition="int",
           check_error="float", message="str", code_sha256="str", generator_version="str",
           source="str", build_id="str", compiler="str", compiler_flags="str",
           hardware_id="str", hardware="json", node="str", run_id="str"),
    # A fitted correction model, rebuilt from these columns alone: its parameters (scalers,
    # coefficients, kernel hyperparameters) and, for a Gaussian process, the row_ids of its training
    # measurements (with their provenance) whose features and times it conditions on again.
    _table("models",
           model_id="str", kind="str", feature_schema="str", machine_sha256="str",
           hardware_id="str", params="json", training="json", training_rows="int",
           score="json", run_id="str"),
    # Communication benchmarks and the models fitted to them, each with its provenance: the MPI
    # library and its version, the hosts (node pair) and ranks per node that ran it.
    _table("comm_benchmarks",
           kind="str", threads="int", ranks="int", bytes="int", median_s="float", samples="json",
           provenance="json", run_id="str"),
    _table("comm_fits",
           kind="str", form="str", a="float", b="float", cv_error="float", validated="bool",
           data="json", ranks="int", provenance="json", run_id="str"),
)}


def schema_description() -> dict[str, dict[str, str]]:
    """The schema as plain data (table -> column -> kind), as written into every store file."""
    return {table.name: dict(table.columns) for table in TABLES.values()}
