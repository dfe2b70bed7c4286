"""Layouts of ranks x threads on a job's nodes: one node where its cores hold the layout, whole nodes one rank each where they do not, refused with one message where neither; the executor holds a spanning task's nodes."""

from __future__ import annotations

import pytest

from hybridtune.describe.configuration import Configuration
from hybridtune.errors import RequestError
from hybridtune.pipeline.measurement_layouts import layout_spans, reservation_lines
from hybridtune.runtime.launch import Launch, JobNode


def _launch(*cores: int) -> Launch:
    nodes = tuple(JobNode(f"n{i + 1}", (i,), tuple(range(c)), "h") for i, c in enumerate(cores))
    return Launch("srun", 0, len(cores), nodes)


def _configs(*layouts):
    return [Configuration(None, None, 100, threads, ranks) for ranks, threads in layouts]


def test_a_layout_takes_one_node_where_it_fits_else_one_node_per_rank():
    assert layout_spans(_configs((1, 1), (2, 1)), _launch(2)) == {(1, 1): 1, (2, 1): 1}
    spans = layout_spans(_configs((1, 1), (2, 1)), _launch(1, 1))
    assert spans == {(1, 1): 1, (2, 1): 2}
    lines = reservation_lines(spans, _launch(1, 1))
    assert lines == ["  2 ranks x 1 threads: each measurement holds 2 whole nodes, one rank each "
                     "(a step across them: srun --overlap); nothing else is measured there "
                     "meanwhile"]
    assert "4 cores of one node" in reservation_lines({(2, 2): 1}, _launch(4))[0]


@pytest.mark.parametrize("cores, layouts, message", [
    ((1, 1), [(2, 2)], "2 ranks x 2 threads: more cores than one node of this job has (1) and "
                       "more nodes than it has (2)"),
    ((2,), [(3, 1), (1, 1)], "3 ranks x 1 threads: more cores than one node"),
    ((2,), [(1, 4)], "threads 4: expected at most 2, the cores of the smallest node"),
])
def test_a_layout_the_job_cannot_hold_is_refused_before_anything_runs(cores, layouts, message):
    with pytest.raises(RequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        layout_spans(_configs(*layouts), _launch(*cores))
