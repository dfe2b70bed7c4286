"""A child timed for wall and CPU, and a benchmark's entries appended whole."""

import json
import sys

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.pipeline.command_timing import append_entry, bench_entry, timed_command

BURN = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.3: pass\n"


def test_a_child_that_computes_is_timed_in_wall_and_cpu_seconds():
    timing = timed_command([sys.executable, "-c", BURN + "print('done')"], keep_stdout=True)
    assert timing.exit == 0 and timing.stdout == "done\n"
    assert timing.cpu_s >= 0.3 and timing.wall_s >= 0.3


def test_a_failing_child_keeps_its_exit_and_error():
    timing = timed_command([sys.executable, "-c", "import sys; sys.exit('no such store')"])
    assert timing.exit == 1 and "no such store" in timing.stderr and timing.stdout == ""


def test_entries_are_appended_to_the_document(tmp_path):
    path = tmp_path / "speed.json"
    for label in ("before", "after"):
        append_entry(path, bench_entry(label, PROJECT_ROOT, [{"wall_s": 1.0}]))
    entries = json.loads(path.read_text())["entries"]
    assert [entry["label"] for entry in entries] == ["before", "after"]
    assert len(entries[0]["commit"]) == 7 and entries[0]["runs"] == [{"wall_s": 1.0}]
