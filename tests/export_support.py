"""Tuned libraries of the two-method fixture store, exported, built and linked into a program."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hybridtune.commands.main import main
from hybridtune.describe.library import PROJECT_ROOT

FOLDER = PROJECT_ROOT / "tests" / "data" / "methods"
SCENARIO = str(FOLDER / "two-methods.scenario.yaml")
GROUND_TRUTH = FOLDER / "fixture.h5"      # every variant of the scenario measured on one host
METHOD = "radauIIA7"


def exported(root: Path, ivp: str, name: str, *extra: str) -> Path:
    """The IVP's tuned library from the fixture store, written to root/name and built by make."""
    assert main(["export", SCENARIO, "--tuned", "--method", METHOD, "--ivp", ivp, "--db",
                 str(GROUND_TRUTH), "-o", str(root / name), "--name", name, *extra]) == 0
    subprocess.run(["make", "-s", "-C", str(root / name)], check=True, capture_output=True)
    return root / name


def linked(root: Path, program: str, *libraries: Path) -> Path:
    """program (C text) compiled against the static libraries of these folders: root/main."""
    (root / "main.c").write_text(program)
    includes = [arg for folder in libraries for arg in ("-I", str(folder))]
    archives = [str(folder / f"lib{folder.name}.a") for folder in libraries]
    subprocess.run(["gcc", "-O2", "-fopenmp", *includes, str(root / "main.c"), *archives, "-lm",
                    "-o", str(root / "main")], check=True)
    return root / "main"
