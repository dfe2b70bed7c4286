"""The nodes a measurement of each (ranks, threads) layout holds in a job; refused where none fits."""

from __future__ import annotations

from hybridtune.errors import RequestError


def _refusal(refused: list, cores: int, nodes: int) -> RequestError:
    if all(ranks == 1 for ranks, _ in refused):
        return RequestError(f"threads {', '.join(str(t) for _, t in refused)}: expected at most "
                            f"{cores}, the cores of the smallest node of this job "
                            f"({nodes} node(s); give each rank its node's cores, e.g. srun -c)")
    return RequestError(", ".join(f"{p} ranks x {t} threads" for p, t in refused)
                        + f": more cores than one node of this job has ({cores}) and more "
                        f"nodes than it has ({nodes}); run fewer ranks or "
                        "threads, or give the job more nodes")


def layout_spans(configs, launch) -> dict:
    """(ranks, threads) -> the nodes one measurement of that layout holds: one node where the
    smallest node's cores take ranks x threads, else one node per rank where the job has the
    nodes and each their threads; a layout that fits neither is refused, before anything runs."""
    cores = min(len(node.cores) for node in launch.nodes)
    spans, refused = {}, []
    for ranks, threads in sorted({(c.ranks, c.threads) for c in configs}):
        if ranks * threads <= cores:
            spans[(ranks, threads)] = 1
        elif 1 < ranks <= len(launch.nodes) and threads <= cores:
            spans[(ranks, threads)] = ranks
        else:
            refused.append((ranks, threads))
    if refused:
        raise _refusal(refused, cores, len(launch.nodes))
    return spans


def reservation_lines(spans: dict, launch) -> list[str]:
    """What each multi-rank layout holds while it is measured (--dry-run and the run's header)."""
    lines = []
    for (ranks, threads), span in sorted(spans.items()):
        if ranks == 1:
            continue
        where = f"{ranks * threads} cores of one node" if span == 1 else \
            f"{span} whole nodes, one rank each (a step across them: srun --overlap)"
        lines.append(f"  {ranks} ranks x {threads} threads: each measurement holds {where}; "
                     "nothing else is measured there meanwhile")
    return lines
