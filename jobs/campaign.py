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
import subprocess
import sys
import time
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.measure.provenance import hardware_identity
from hybridtune.pipeline.ground_truth_campaign import (CampaignRefused, check_machine_file,
                                                       check_resume, cpu_tag, pass_scenario,
                                                       seed_predictions)

BIN = Path(sys.executable).parent
DEFAULT_SCENARIO = ROOT / "scenarios" / "groundtruth-regions.yaml"
PASS_SEED = 2
CAMPAIGN_ENV = "HYBRIDTUNE_GROUND_TRUTH_CAMPAIGN"


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
    identity = hardware_identity()
    hardware_id, cpu = identity["hardware_id"], identity["hardware"]["model"]
    out = args.out or ROOT / "data" / "groundtruth" / cpu_tag(cpu)
    try:
        check_machine_file(args.machine)
        if not args.scenario.is_file():
            raise CampaignRefused(f"--scenario {args.scenario}: no such file")
        machine_text = args.machine.read_text()
        check_resume(out, hardware_id, machine_text)
    except CampaignRefused as exc:
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
