"""The store across processes: SIGKILLed writers (appending, compacting, recovering) lose nothing flushed and duplicate nothing; one writer at a time; readers read beside a writer."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hybridtune.store import Store, StoreLockedError

WRITER = textwrap.dedent("""
    import sys
    from hybridtune.store import Store

    action, path = sys.argv[1], sys.argv[2]

    def measurement(i):
        return dict(row_id=f"r{i}", id=f"m{i}", method="radauIIA7", ivp="Cusp", n=i, threads=1,
                    ranks=1, nodes=1, status="ok", median_s=1e-4 * i, ci_low_s=None, ci_high_s=None, ci_rel=0.01,
                    ci_target=0.02, budget_s=5.0, timing="alone", repetitions=6, steps_per_repetition=10,
                    check_error=0.0, message="x" * (i % 50), code_sha256="c" * 64,
                    generator_version="1", source="variant.c", build_id="b" * 16,
                    compiler="gcc 13.2", compiler_flags="-O3 -march=native", hardware_id="h" * 16,
                    hardware={"model": "cpu"}, node="n1")

    def prediction(i, j):
        return dict(key=f"{i}-{j}", code_hash="c" * 64, machine_sha256="d" * 64, region="L2",
                    threads=1, model="ECM", kerncraft_version="0.8.18", osaca_version="0.7.1",
                    n_sample=j, status="ok", message="", cycles_per_cl=1.0 * j,
                    iterations_per_cl=8.0, contributions={"L1L2": j, "L2L3": [j, j]},
                    saturation_cores=2)

    if action == "loop":  # every op is one flushed record; op i is announced after it returns
        store = Store.open(path, "a", run={"command": "loop"})
        i = 0
        while True:
            if i % 10 == 9:
                store.append_many("kernel_predictions", [prediction(i, j) for j in range(200)])
            else:
                store.append("measurements", **measurement(i))
            print(i, flush=True)
            i += 1
    elif action == "bulk":  # many rows, then a long compaction in close()
        store = Store.open(path, "a", run={"command": "bulk"})
        for start in range(0, 40000, 2000):
            store.append_many("measurements", [measurement(i) for i in range(start, start + 2000)])
        print("closing", flush=True)
        store.close()
        print("closed", flush=True)
    elif action == "reopen":
        Store.open(path, "a").close()
        print("closed", flush=True)
    elif action == "full-disk":  # a write that fails half-way must leave no torn line behind
        import os, resource, signal
        from hybridtune.store import StoreError
        store = Store.open(path, "a", run={"command": "full-disk"})
        store.append("measurements", **measurement(0))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limits = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path + ".journal") + 5000,
                                                   limits[1]))
        try:
            store.append_many("measurements", [measurement(i) for i in range(1, 1000)])
        except StoreError as error:
            print("refused:", error, flush=True)
        store.append("measurements", **measurement(1000))
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        store.close()
        print("closed", flush=True)
    elif action == "hold":
        with Store.open(path, "a", run={"command": "hold"}) as store:
            store.append_many("measurements", [measurement(i) for i in range(3)])
            print("ready", flush=True)
            for line in sys.stdin:
                store.append_many("measurements", [measurement(i) for i in range(3, 5)])
                print("appended", flush=True)
        print("closed", flush=True)
""")


def start(action: str, path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, action, str(path)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def read_until(proc: subprocess.Popen, done, timeout: float = 60.0) -> list[str]:
    """Lines of proc's output until done(line) holds; fails with the output if proc ends first."""
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if not ready:
            continue
        line = proc.stdout.readline()
        if not line:
            pytest.fail("writer ended early:\n" + "".join(lines[-20:]))
        lines.append(line)
        if done(line.strip()):
            return lines
    proc.kill()
    pytest.fail("writer too slow:\n" + "".join(lines[-20:]))


def kill(proc: subprocess.Popen) -> str:
    """SIGKILL proc; everything it printed before it died that was not read yet."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    # through proc.stdout, not communicate(): lines readline() has buffered but not returned
    # are in that reader, and communicate() reads the pipe beside it
    rest = proc.stdout.read()
    proc.stdout.close()
    proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL
    return rest


def kill_when(proc: subprocess.Popen, happened, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not happened():
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the writer ended before it could be killed: {proc.communicate()[0]}")
        time.sleep(0.0002)
    kill(proc)


def ops_held(path) -> tuple[int, list, list]:
    """How many loop ops the store holds, checked to be exactly the first ones, each once."""
    with Store.open(path, "r") as reader:
        measured = reader.frame("measurements").n.tolist()
        keys = reader.frame("kernel_predictions").key.tolist()
    batches = sorted({int(key.split("-")[0]) for key in keys})
    count = max(measured[-1] if measured else -1, batches[-1] if batches else -1) + 1
    assert measured == [i for i in range(count) if i % 10 != 9]
    assert keys == [f"{i}-{j}" for i in range(count) if i % 10 == 9 for j in range(200)]
    return count, measured, keys


@pytest.mark.parametrize("kill_after", [37, 400])
def test_a_writer_killed_while_appending_keeps_every_flushed_record_once(tmp_path, kill_after):
    path = tmp_path / "s.h5"
    proc = start("loop", path)
    printed = read_until(proc, lambda line: line.isdigit() and int(line) >= kill_after)
    printed += kill(proc).splitlines()
    last = int([line for line in printed if line.strip().isdigit()][-1])
    count, measured, keys = ops_held(path)
    assert count in (last + 1, last + 2)  # every announced op, plus at most the one in flight
    assert path.with_name("s.h5.journal").exists()
    with Store.open(path, "a") as writer:  # the next writer folds the journal in
        writer.append("measurements", row_id="after", id="after", method="m", ivp="i", n=10**6,
                      threads=1, ranks=1, nodes=1, status="ok", median_s=None, ci_low_s=None,
                      ci_high_s=None,
                      ci_rel=None, ci_target=None, budget_s=None, timing="alone", repetitions=0,
                      steps_per_repetition=0, check_error=None, message="", code_sha256="",
                      generator_version="", source="", build_id="", compiler="",
                      compiler_flags="", hardware_id="", hardware={}, node="", run_id="later")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]
    with Store.open(path, "r") as reader:
        again = reader.frame("measurements").n.tolist()
        assert reader.frame("kernel_predictions").key.tolist() == keys
        assert reader.frame("runs").command.tolist() == ["loop"]
    assert again == measured + [10**6]


def test_writers_killed_while_compacting_and_while_recovering_lose_and_duplicate_nothing(tmp_path):
    path = tmp_path / "s.h5"
    scratch = tmp_path / "s.h5.compacting"
    journal = tmp_path / "s.h5.journal"
    proc = start("bulk", path)
    read_until(proc, lambda line: line == "closing")
    kill_when(proc, scratch.exists)
    assert scratch.exists() and journal.exists()  # killed before the new file was renamed in
    with Store.open(path, "r") as reader:
        assert reader.frame("measurements").n.tolist() == list(range(40000))

    first = scratch.stat().st_mtime_ns
    proc = start("reopen", path)

    def scratch_rewritten():
        try:
            return scratch.stat().st_mtime_ns != first
        except FileNotFoundError:
            return False
    kill_when(proc, scratch_rewritten)
    assert journal.exists()
    with Store.open(path, "r") as reader:
        assert reader.frame("measurements").n.tolist() == list(range(40000))

    proc = start("reopen", path)
    assert read_until(proc, lambda line: line == "closed")
    assert proc.wait(timeout=30) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]
    with Store.open(path, "r") as reader:
        assert reader.frame("measurements").n.tolist() == list(range(40000))
        assert reader.frame("runs").command.tolist() == ["bulk"]


def test_a_second_writer_is_refused_while_readers_follow_the_first(tmp_path):
    path = tmp_path / "s.h5"
    proc = start("hold", path)
    try:
        read_until(proc, lambda line: line == "ready")
        with pytest.raises(StoreLockedError) as info:
            Store.open(path, "a")
        assert str(info.value).startswith(f"{path} is open for writing by another process")
        with Store.open(path, "r") as reader:
            assert reader.frame("measurements").id.tolist() == ["m0", "m1", "m2"]
            proc.stdin.write("more\n")
            proc.stdin.flush()
            read_until(proc, lambda line: line == "appended")
            reader.refresh()
            assert reader.frame("measurements").n.tolist() == [0, 1, 2, 3, 4]
            proc.stdin.close()
            read_until(proc, lambda line: line == "closed")
            assert proc.wait(timeout=30) == 0
            assert reader.rows("measurements") == 5  # its snapshot outlives the writer's rename
        with Store.open(path, "a") as writer:
            assert writer.rows("measurements") == 5
    finally:
        if proc.poll() is None:
            kill(proc)
    assert os.listdir(tmp_path) == ["s.h5"]


def test_a_journal_write_that_fails_half_way_is_undone(tmp_path):
    path = tmp_path / "s.h5"
    proc = start("full-disk", path)
    output = "".join(read_until(proc, lambda line: line == "closed"))
    assert proc.wait(timeout=30) == 0
    assert "refused:" in output and "cannot append to the store journal" in output
    with Store.open(path, "r") as reader:
        assert reader.frame("measurements").n.tolist() == [0, 1000]
