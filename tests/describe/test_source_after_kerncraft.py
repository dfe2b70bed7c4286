"""Descriptions read the same after kerncraft's import has changed ruamel.yaml's resolvers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from hybridtune.describe.library import PROJECT_ROOT


def test_descriptions_load_in_a_process_that_imported_kerncraft():
    script = textwrap.dedent(f"""
        import kerncraft.machinemodel                      # registers the '!prefixed' resolver
        from hybridtune.describe.loader import load
        scenario = load({str(PROJECT_ROOT / 'scenarios' / 'default.yaml')!r}, "scenario")
        cusp = next(i for i in scenario.ivps if i.name == "Cusp")
        machine = load({str(PROJECT_ROOT / 'data' / 'machines' / 'SkylakeSP_Gold-6148.yml')!r},
                       "machine")
        print(len(cusp.components), machine.levels[0].size_bytes)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["9", "32000.0"]
