"""The ground-truth campaign on one host: every variant of every whole-pool configuration of a scenario timed in two independent passes, in different orders, resumable, refused on other hardware and with a machine file that depends on the host.

    jobs/campaign.sh --machine FILE [--scenario S] [--out DIR] [--ci C] [--budget B]

The campaign folder DIR (default data/groundtruth/<cpu tag>/) holds:
- machine.yml: the machine file (explicit compiler flags: no -march=native or -xHost, so its
  predictions can be reproduced on any host) and campaign.json: the hardware, settings and times;
- scenario-pass1.yaml, scenario-pass2.yaml: the scenario with this machine file, the second with
  its IVPs in reverse order;
- pass1.h5 (run_all: each pool in the offline model's order) and pass2.h5 (each pool in a random
  order, seeded): one store per pass, so each pass resumes on its own after a kill;
- ground-truth.h5: both passes merged (each variant's two first timings), trained on.
Exit codes: 0 done, 2 bad input (nothing written), 3 a pass stopped early (rerun to resume), else
the failing command's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEFAULT_SCENARIO = ROOT / "scenarios" / "groundtruth-regions.yaml"
PASS_SEED = 2
CAMPAIGN_ENV = "HYBRIDTUNE_GROUND_TRUTH_CAMPAIGN"
HOST_DEPENDENT = ("-march=native", "-mtune=native", "-xHost")


class BadInput(Exception):
    """What the campaign refuses before writing anything."""


def cpu_tag(model: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "host"


def check_machine_file(path: Path) -> None:
    """The machine file, refused where it does not parse or its compiler flags depend on the host."""
    from hybridtune.describe.loader import load
    from hybridtune.errors import HybridtuneError
    if not path.is_file():
        raise BadInput(f"--machine {path}: no such file")
    try:
        machine = load(path, "machine")
    except HybridtuneError as exc:
        raise BadInput(f"--machine {path}: {exc}") from None
    for name, flags in machine.compilers:
        found = [flag for flag in flags.split() if flag in HOST_DEPENDENT]
        if found:
            raise BadInput(
                f"--machine {path}: key 'compiler' ({name}): flags '{flags}' contain {found[0]}, "
                "which depends on the host the predictions are made on; expected explicit target "
                "flags (`hybridtune probe` writes them: gcc's -march=native resolved, such as "
                "-march=znver3)")


def store_hardware(path: Path) -> set[str]:
    """The hardware ids a store's measurements were taken on."""
    from hybridtune.store.database import Store
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
            raise BadInput(
                f"{record}: key 'hardware_id' is {started.get('hardware_id')!r} "
                f"({started.get('cpu', 'another CPU')}); this host is {hardware_id!r}: a campaign "
                "resumes only on the hardware it began on (give another --out)")
        if (out / "machine.yml").is_file() and (out / "machine.yml").read_text() != machine_text:
            raise BadInput(f"{out / 'machine.yml'}: the campaign began with another machine file "
                           "than --machine; give that one or another --out")
    for store in sorted(out.glob("pass*.h5")):
        others = store_hardware(store) - {hardware_id}
        if others:
            raise BadInput(f"{store}: measurements on hardware {', '.join(sorted(others))}; this "
                           f"host is {hardware_id!r}: a campaign resumes only on its own hardware")


PREDICTION_TABLES = ("kernels", "kernel_predictions", "variant_predictions", "prediction_sets")


def seed_predictions(source: Path, target: Path) -> None:
    """A new pass store starts with the first pass's predictions (the offline model is the same
    for both; its kerncraft analyses are not run again), its run recorded as the seeding."""
    from hybridtune.store.database import Store
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
    header = (f"# written by jobs/campaign.py from {scenario.name}; "
              f"{'IVPs in reverse order' if reverse else 'IVPs in order'}\n")
    return header + yaml.safe_dump(data, sort_keys=False)


def run(command: list[str], log) -> int:
    print("$", " ".join(command), flush=True, file=log)
    return subprocess.run(command, cwd=ROOT, env={**os.environ, CAMPAIGN_ENV: "1"}).returncode


def write_json(path: Path, data: dict) -> None:
    scratch = path.with_suffix(".json.tmp")
    scratch.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(scratch, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", type=Path, required=True)
    parser.add_argument("--scenario", type=Path, default=DEFAULT_SCENARIO)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--ci", type=float, default=0.02)
    parser.add_argument("--budget", type=float, default=0.3)
    args = parser.parse_args(argv)
    from hybridtune.measure.provenance import hardware_identity
    identity = hardware_identity()
    hardware_id, cpu = identity["hardware_id"], identity["hardware"]["model"]
    out = args.out or ROOT / "data" / "groundtruth" / cpu_tag(cpu)
    try:
        check_machine_file(args.machine)
        if not args.scenario.is_file():
            raise BadInput(f"--scenario {args.scenario}: no such file")
        machine_text = args.machine.read_text()
        check_resume(out, hardware_id, machine_text)
    except BadInput as exc:
        print(f"campaign: {exc}", file=sys.stderr)
        return 2
    record_path = out / "campaign.json"
    merged = out / "ground-truth.h5"
    started = json.loads(record_path.read_text()) if record_path.is_file() else None
    if started and merged.is_file() and "finished_at" in started:
        print(f"campaign: finished at {started['finished_at']}; its store is {merged} (both "
              "passes; the pass stores are not needed any more). Nothing to do: give another "
              "--out for a new campaign")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    (out / "machine.yml").write_text(machine_text)
    record = started if started is not None else {
        "hardware_id": hardware_id, "cpu": cpu, "hardware": identity["hardware"],
        "scenario": str(args.scenario.relative_to(ROOT) if args.scenario.is_relative_to(ROOT)
                        else args.scenario),
        "ci": args.ci, "budget_s": args.budget, "passes": {}}
    write_json(record_path, record)
    hybridtune = str(BIN / "hybridtune")
    for number, reverse, strategy in ((1, False, "run_all"),
                                      (2, True, f"random:1000000:{PASS_SEED}")):
        if number > 1:
            seed_predictions(out / "pass1.h5", out / f"pass{number}.h5")
        scenario = out / f"scenario-pass{number}.yaml"
        scenario.write_text(pass_scenario(args.scenario, out / "machine.yml", reverse))
        began = time.time()
        code = run([hybridtune, "tune", str(scenario), "--db", str(out / f"pass{number}.h5"),
                    "--ci", str(args.ci), "--budget", str(args.budget), "--head", "0",
                    "--strategy", strategy], sys.stdout)
        spent = record["passes"].get(str(number), {}).get("seconds", 0.0) + time.time() - began
        record["passes"][str(number)] = {"strategy": strategy, "ivps_reversed": reverse,
                                         "seconds": round(spent, 1), "exit_code": code}
        write_json(record_path, record)
        if code != 0:
            return code
    scratch = out / "ground-truth.merging.h5"
    scratch.unlink(missing_ok=True)
    code = run([hybridtune, "store", "merge", str(out / "pass1.h5"), str(out / "pass2.h5"),
                "-o", str(scratch), "--passes"], sys.stdout)
    if code != 0:
        return code
    os.replace(scratch, merged)
    code = run([hybridtune, "train", "--db", str(merged)], sys.stdout)
    record["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    write_json(record_path, record)
    return code


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("campaign: interrupted; what was measured is stored: rerun the same command to "
              "resume", file=sys.stderr)
        sys.exit(130)
