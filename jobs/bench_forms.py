"""Benchmark of the kerncraft forms' fidelity: each paper IVP's RHS as generated against its form.

Per IVP, at one n whose RHS working set fits L1 (predict/form_fidelity): the generated RHS kernel
(with the project's flags and with -ftrapping-math), the loops of its kerncraft form timed alone,
and kerncraft's ECM prediction of them. real / form says whether the form is the code that runs;
form / ECM whether the in-core and transfer model predicts that code. Writes data/bench/forms.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from hybridtune.compiler.build import FLAGS
from hybridtune.describe.library import PROJECT_ROOT, host_machine_file
from hybridtune.describe.loader import load_named
from hybridtune.errors import HybridtuneError
from hybridtune.measure.provenance import cpu_model
from hybridtune.predict.form_fidelity import form_fidelity

IVPS = ("Cusp", "InverterChain", "Medakzo", "Wave1D", "Heat2D")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=576, help="system size (576 = 24 x 24 suits every "
                        "paper IVP; the RHS reads and writes 4 stages x 2 vectors of it)")
    parser.add_argument("--machine", type=Path, help="kerncraft machine file (default: host)")
    parser.add_argument("--output", type=Path, default=PROJECT_ROOT / "data" / "bench" / "forms.json")
    args = parser.parse_args()
    machine = args.machine or host_machine_file()[0]
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    template = load_named("kernel", "RHS", PROJECT_ROOT)
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rows = [form_fidelity(load_named("ivp", name, PROJECT_ROOT), method, template, machine,
                                  args.n, Path(tmp)) for name in IVPS]
    except HybridtuneError as exc:
        sys.exit(str(exc))
    result = {"command": "jobs/bench_forms.sh " + " ".join(sys.argv[1:]), "started": started,
              "host": platform.node(), "cpu": cpu_model(), "machine_file": str(machine),
              "flags": " ".join(FLAGS), "n": args.n, "ivps": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print("| IVP | generated RHS ns | with -ftrapping-math | form ns | ECM ns | real / form | "
          "form / ECM |\n|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['ivp']} | {r['real_ns']:.3f} | {r['real_trapping_math_ns']:.3f} | "
              f"{r['form_ns']:.3f} | {r['ecm_ns']:.3f} | {r['real_over_form']:.2f} | "
              f"{r['form_over_ecm']:.2f} |")
    print(f"per component evaluation, n = {args.n}; written to {args.output}")


if __name__ == "__main__":
    main()
