"""The local Slurm test cluster (jobs/local-cluster): two emulated nodes of one core each, started
once per session in a folder of its own and stopped at the end. Starting it may install Debian's
slurm-wlm and munge; when that or the start fails, every test using it errors (never skips)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest


SCRIPTS = Path(__file__).resolve().parents[2] / "jobs" / "local-cluster"


@dataclass
class Cluster:
    dir: Path
    env: dict[str, str]  # os.environ plus SLURM_CONF

    def script(self, name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """Runs jobs/local-cluster/<name> --dir DIR *args; stdout and stderr together."""
        return run_script(name, "--dir", str(self.dir), *args, timeout=timeout)

    def pids(self) -> dict[str, int]:
        """The pid files in DIR/run: {"munged": pid, "slurmctld": pid, "slurmd-n1": pid, ...}."""
        return {f.stem: int(f.read_text()) for f in (self.dir / "run").glob("*.pid")}


def run_script(name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPTS / name), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)


def new_cluster_dir() -> Path:
    """A fresh folder under /tmp: munged wants every folder above its socket searchable by all,
    which pytest's own tmp folders (mode 700) are not."""
    path = Path(tempfile.mkdtemp(prefix="htc-"))
    path.chmod(0o755)
    return path


def start_cluster(path: Path, nodes: int = 2, cores: int = 1) -> Cluster:
    # start installs the packages when missing (apt-get update + install: minutes at worst)
    done = run_script("start", "--dir", str(path), "--nodes", str(nodes),
                      "--cores-per-node", str(cores), timeout=900)
    if done.returncode != 0:
        pytest.fail(f"jobs/local-cluster/start failed (exit {done.returncode}):\n{done.stdout}",
                    pytrace=False)
    return Cluster(path, {**os.environ, "SLURM_CONF": str(path / "slurm.conf")})


@pytest.fixture
def fresh_cluster():
    """fresh_cluster() -> a Cluster of its own (2 nodes x 1 core) in a new folder; stopped and
    removed after the test if the test left it running."""
    made: list[Cluster] = []

    def _start() -> Cluster:
        path = new_cluster_dir()
        made.append(Cluster(path, {}))
        cluster = start_cluster(path)
        made[-1] = cluster
        return cluster

    yield _start
    for cluster in made:
        done = cluster.script("stop")
        shutil.rmtree(cluster.dir, ignore_errors=True)
        assert done.returncode == 0, done.stdout


@pytest.fixture(scope="session")
def local_cluster():
    path = new_cluster_dir()
    cluster = start_cluster(path)
    try:
        yield cluster
    finally:
        done = cluster.script("stop")
        assert done.returncode == 0, done.stdout
        shutil.rmtree(path, ignore_errors=True)
