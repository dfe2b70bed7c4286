"""The ground-truth campaign's checks and passes: refused input, resumption, seeded predictions.

A campaign times every variant of every whole-pool configuration of a scenario in two passes, in
different orders, on one host. It is refused (CampaignRefused, before anything is written) where the
machine file does not parse or its compiler flags depend on the host, and where its folder or
stores were begun on other hardware or with another machine file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml

from hybridtune.describe.loader import load
from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.store.database import Store

HOST_DEPENDENT = ("-march=native", "-mtune=native", "-xHost")


class CampaignRefused(RequestError):
    """What the campaign refuses before writing anything."""


def cpu_tag(model: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "host"


def check_machine_file(path: Path) -> None:
    """The machine file, refused where it does not parse or its compiler flags depend on the host."""
    if not path.is_file():
        raise CampaignRefused(f"--machine {path}: no such file")
    try:
        machine = load(path, "machine")
    except HybridtuneError as exc:
        raise CampaignRefused(f"--machine {path}: {exc}") from None
    for name, flags in machine.compilers:
        found = [flag for flag in flags.split() if flag in HOST_DEPENDENT]
        if found:
            raise CampaignRefused(
                f"--machine {path}: key 'compiler' ({name}): flags '{flags}' contain {found[0]}, "
                "which depends on the host the predictions are made on; expected explicit target "
                "flags (`hybridtune probe` writes them: gcc's -march=native resolved, such as "
                "-march=znver3)")


def store_hardware(path: Path) -> set[str]:
    """The hardware ids a store's measurements were taken on."""
    if not path.is_file():
        return set()
    with Store.open(path, "r") as store:
        frame = store.frame("measurements", ["hardware_id"])
    return set(frame["hardware_id"].astype(str))


def check_resume(out: Path, hardware_id: str, machine_text: str) -> None:
    """A campaign folder resumes only on the hardware and with the machine file it began with."""
    record = out / "campaign.json"
    if record.is_file():
        started = json.loads(record.read_text())
        if started.get("hardware_id") != hardware_id:
            raise CampaignRefused(
                f"{record}: key 'hardware_id' is {started.get('hardware_id')!r} "
                f"({started.get('cpu', 'another CPU')}); this host is {hardware_id!r}: a campaign "
                "resumes only on the hardware it began on (give another --out)")
        if (out / "machine.yml").is_file() and (out / "machine.yml").read_text() != machine_text:
            raise CampaignRefused(f"{out / 'machine.yml'}: the campaign began with another machine file "
                           "than --machine; give that one or another --out")
    for store in sorted(out.glob("pass*.h5")):
        others = store_hardware(store) - {hardware_id}
        if others:
            raise CampaignRefused(f"{store}: measurements on hardware {', '.join(sorted(others))}; this "
                           f"host is {hardware_id!r}: a campaign resumes only on its own hardware")


PREDICTION_TABLES = ("kernels", "kernel_predictions", "variant_predictions", "prediction_sets")


def seed_predictions(source: Path, target: Path) -> None:
    """A new pass store starts with the first pass's predictions (the offline model is the same
    for both; its kerncraft analyses are not run again), its run recorded as the seeding."""
    if target.exists() or not source.is_file():
        return
    with Store.open(source, "r") as first:
        frames = {name: first.frame(name) for name in PREDICTION_TABLES}
    scratch = target.with_name(target.name + ".seeding")
    for leftover in (scratch, Path(str(scratch) + ".journal")):
        leftover.unlink(missing_ok=True)
    with Store.open(scratch, "a", run={"command": "campaign seed",
                                       "argv": ["seed predictions from", str(source)]}) as store:
        for name, frame in frames.items():
            if not frame.empty:
                store.append_many(name, frame.drop(columns="run_id").to_dict("records"))
    os.replace(scratch, target)


def pass_scenario(scenario: Path, machine: Path, reverse: bool) -> str:
    data = yaml.safe_load(scenario.read_text())
    data["machine"] = machine.name        # beside the pass scenario
    data["name"] = f"{data.get('name', scenario.stem)}-pass{2 if reverse else 1}"
    if reverse:
        data["ivps"] = list(reversed(data["ivps"]))
    data["strategy"] = "run_all"
    header = (f"# written by the ground-truth campaign from {scenario.name}; "
              f"{'IVPs in reverse order' if reverse else 'IVPs in order'}\n")
    return header + yaml.safe_dump(data, sort_keys=False)
