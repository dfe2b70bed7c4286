"""The ground-truth campaign's checks: host-dependent flags and other hardware refused, pass scenarios."""

import json

import pytest
import yaml

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.pipeline.ground_truth_campaign import (CampaignRefused, check_machine_file,
                                                       check_resume, cpu_tag, pass_scenario)

MACHINE = PROJECT_ROOT / "tests" / "data" / "shared" / "machines" / "SkylakeSP_Gold-6148.yml"


def test_the_cpu_tag_is_a_folder_name():
    assert cpu_tag("AMD EPYC 7B13 64-Core Processor") == "amd-epyc-7b13-64-core-processor"
    assert cpu_tag("??") == "host"


def test_a_machine_file_whose_flags_depend_on_the_host_is_refused(tmp_path):
    check_machine_file(MACHINE)
    native = tmp_path / "native.yml"
    native.write_text(MACHINE.read_text().replace("-march=skylake-avx512", "-march=native"))
    with pytest.raises(CampaignRefused, match="-march=native"):
        check_machine_file(native)
    with pytest.raises(CampaignRefused, match="no such file"):
        check_machine_file(tmp_path / "missing.yml")


def test_a_campaign_resumes_only_on_its_hardware_and_machine_file(tmp_path):
    (tmp_path / "campaign.json").write_text(json.dumps({"hardware_id": "abc", "cpu": "X"}))
    (tmp_path / "machine.yml").write_text("mine")
    check_resume(tmp_path, "abc", "mine")
    with pytest.raises(CampaignRefused, match="resumes only on the hardware"):
        check_resume(tmp_path, "other", "mine")
    with pytest.raises(CampaignRefused, match="another machine file"):
        check_resume(tmp_path, "abc", "theirs")


def test_the_second_pass_runs_the_ivps_in_reverse(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\nivps: [A, B, C]\nstrategy: hybrid\nmachine: host\n")
    first = yaml.safe_load(pass_scenario(scenario, tmp_path / "machine.yml", False))
    second = yaml.safe_load(pass_scenario(scenario, tmp_path / "machine.yml", True))
    assert first["ivps"] == ["A", "B", "C"] and second["ivps"] == ["C", "B", "A"]
    assert first["strategy"] == second["strategy"] == "run_all"
    assert (first["name"], second["name"]) == ("s-pass1", "s-pass2")
    assert first["machine"] == "machine.yml"
