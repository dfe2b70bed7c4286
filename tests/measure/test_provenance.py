"""Provenance: the CPU's model and the source tree's state a benchmark records."""

import subprocess

from hybridtune.measure.provenance import cpu_model, hardware_identity, tree_state


def test_cpu_model_is_the_hardware_identity_model():
    assert cpu_model() == hardware_identity()["hardware"]["model"]


def test_tree_state_names_the_commit_the_changes_and_a_digest_of_the_sources(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "hybridtune").mkdir()
    (tmp_path / "hybridtune" / "a.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    clean = tree_state(tmp_path)
    assert len(clean["commit"]) == 40 and clean["uncommitted"] == []
    (tmp_path / "hybridtune" / "a.py").write_text("x = 2\n")
    (tmp_path / "hybridtune" / "notes.txt").write_text("not a source")
    changed = tree_state(tmp_path)
    assert changed["commit"] == clean["commit"]
    assert changed["uncommitted"] == [" M hybridtune/a.py", "?? hybridtune/notes.txt"]
    assert changed["sources_sha256"] != clean["sources_sha256"]
