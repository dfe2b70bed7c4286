"""The tuned solver's dispatch table: the best variant per ranks, threads and cache region of n.

Best is the variant measured best, or else predicted best.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

import pandas as pd

from hybridtune.describe.machine import Machine
from hybridtune.errors import RequestError
from hybridtune.generate.kerncraft_form import ELEMENT_BYTES
from hybridtune.learn import timing
from hybridtune.learn.table import best_measurements
from hybridtune.measure.race import RACE_GAP
from hybridtune.generate.size_expressions import N
from hybridtune.predict.working_set import border, capacities



@dataclass(frozen=True)
class Rule:
    """Requests on `ranks` MPI ranks (exactly) for `threads` threads per rank (up to the next key)
    and n_low <= n < n_high run `variant` on those ranks with run_threads threads each."""
    ranks: int
    threads: int
    n_low: int
    n_high: int | None           # None: unbounded
    level: str                   # the level that holds one time step's data in this range
    variant: str
    run_threads: int
    measured: bool               # False: predicted, not measured
    basis: str                   # how the variant was chosen, in words
    median_s: tuple = ()         # ((n, seconds per step), ...) of the choice at the sizes measured here
    candidates: tuple = ()       # ((variant, run_threads), ...): the choice first, then the next
                                 # best measured here, which an adaptive library times at run time

    def contains(self, n: int) -> bool:
        return n >= self.n_low and (self.n_high is None or n < self.n_high)

    @property
    def layout(self) -> str:
        return f"{self.ranks} rank(s) x {self.run_threads} thread(s)"

    def as_json(self) -> dict:
        return {"ranks": self.ranks, "threads": self.threads, "layout": self.layout,
                "n_low": self.n_low, "n_high": self.n_high, "level": self.level,
                "variant": self.variant, "run_threads": self.run_threads,
                "measured": self.measured, "basis": self.basis,
                "median_s_per_step": {str(n): s for n, s in self.median_s},
                "candidates": [{"variant": v, "run_threads": t} for v, t in self.options]}

    @property
    def options(self) -> tuple:
        """(variant, run_threads) of the choice and the other candidates."""
        return self.candidates or ((self.variant, self.run_threads),)


@dataclass(frozen=True)
class DispatchTable:
    method: str
    ivp: str
    hardware_id: str
    step_vectors: int            # vectors of n doubles in one time step (the largest variant's)
    rules: tuple                 # Rule, by ranks, threads, n_low
    notes: tuple = ()

    @property
    def variants(self) -> tuple:
        return tuple(dict.fromkeys(v for rule in self.rules for v, _ in rule.options))

    @property
    def mpi(self) -> bool:
        """Whether a rule runs on more than one rank (the library then calls MPI)."""
        return any(rule.ranks > 1 for rule in self.rules)

    @property
    def rank_keys(self) -> tuple:
        return tuple(sorted({rule.ranks for rule in self.rules}))

    def thread_keys(self, ranks: int = 1) -> tuple:
        return tuple(sorted({rule.threads for rule in self.rules if rule.ranks == ranks}))

    def rule_for(self, n: int, threads: int, ranks: int = 1) -> Rule | None:
        """The rule the C dispatcher applies: of the rules of exactly `ranks` ranks (None where
        there are none), the largest thread key <= threads (else the smallest)."""
        keys = self.thread_keys(ranks)
        if not keys:
            return None
        key = max((k for k in keys if k <= threads), default=keys[0])
        return next(r for r in self.rules if r.ranks == ranks and r.threads == key
                    and r.contains(n))

    def as_json(self) -> dict:
        return {"method": self.method, "ivp": self.ivp, "hardware_id": self.hardware_id,
                "step_vectors": self.step_vectors, "variants": list(self.variants),
                "rules": [rule.as_json() for rule in self.rules], "notes": list(self.notes)}


def measured_times(rows: list[dict], method: str, ivp: str, canonical: dict) -> tuple:
    """(hardware_id, {(n, ranks, threads): {variant: median_s}}, notes) of the ok measurements of
    one method and IVP; canonical maps every pool id (and folded alias) to the pool's id; a row
    without ranks is of one rank.

    Of the hardware measured, the one with the most ok rows; per variant, n, ranks and threads its
    time by learn/timing's rule: where the configuration's latest re-timing round holds its fastest
    first timing, the round's re-timings; else the mean of passes of the first timings.
    """
    ok = [r for r in rows if r["method"] == method and r["ivp"] == ivp and r["status"] == "ok"
          and _positive(r["median_s"])]
    if not ok:
        others = sorted({f"{r['method']}/{r['ivp']}" for r in rows if r["status"] == "ok"})
        held = f"; it holds ok measurements of {', '.join(others)}" if others else ""
        raise RequestError(f"no ok measurement of {method} on {ivp}{held} (measure with "
                           "`hybridtune tune` first)")
    notes = []
    outside = sorted({r["id"] for r in ok if r["id"] not in canonical})
    if outside:
        notes.append(f"{len(outside)} measured variant(s) not in the scenario's pool left out")
    counts: dict = {}
    for row in ok:
        if row["id"] in canonical:
            counts[row["hardware_id"]] = counts.get(row["hardware_id"], 0) + 1
    if not counts:
        raise RequestError(f"no ok measurement of {method} on {ivp} is of a variant in the "
                           "scenario's pool (name the scenario that was tuned)")
    hardware = min(counts, key=lambda h: (-counts[h], h))
    if len(counts) > 1:
        notes.append(f"measurements of {len(counts)} machines in the store: used hardware "
                     f"{hardware} ({counts[hardware]} ok rows), the one measured most")
    mine = [{**row, "id": canonical[row["id"]]} for row in ok
            if row["id"] in canonical and row["hardware_id"] == hardware]
    timed = best_measurements(pd.DataFrame(mine), hardware)
    times: dict = {}
    for (n, ranks, threads), group in timed.groupby(["n", "ranks", "threads"]):
        first = dict(zip(group["variant"], group["median_s"].astype(float)))
        again = group[group["retimed_s"].notna()]
        retimed = dict(zip(again["variant"], again["retimed_s"].astype(float)))
        times[(int(n), int(ranks), int(threads))] = timing.compared(first, retimed)
    return hardware, times, notes


def predicted_times(rows: list[dict], scenario: str, method: str, ivp: str,
                    canonical: dict, machine_sha256: str) -> dict:
    """{(n, ranks, threads): {variant: predicted_s}} of the scenario's offline predictions with
    its machine file (latest row; a row whose features name another machine file is another
    machine's prediction and left out)."""
    times: dict = {}
    for row in rows:
        features = row.get("features")
        machine = features.get("machine_sha256") if isinstance(features, dict) else None
        if (row["scenario"] == scenario and row["method"] == method and row["ivp"] == ivp
                and machine in (None, machine_sha256)
                and row["variant"] in canonical and _positive(row["predicted_s"])):
            key = (int(row["n"]), ranks_of(row), int(row["threads"]))
            times.setdefault(key, {})[canonical[row["variant"]]] = float(row["predicted_s"])
    return times


def layout_times(measured: dict, predicted: dict, mpi: frozenset) -> tuple[dict, dict, list]:
    """The measured and predicted times a library can run, and notes on what it leaves out: on
    more than one rank the MPI variants' (of `mpi`, the ids of MPI skeletons' variants); on one
    rank the one-process variants', which need no MPI, or, where none has a one-rank time, the MPI
    variants' when some has times on more than one rank. MPI variants measured (or predicted) on
    one rank alone are left out."""
    every = [*measured.items(), *predicted.items()]
    beyond_one = any(v in mpi for (_, ranks, _), options in every if ranks > 1 for v in options)
    one_process = any(v not in mpi for (_, ranks, _), options in every if ranks == 1
                      for v in options)

    def runs(ranks: int, variant: str) -> bool:
        if ranks > 1:
            return variant in mpi
        return variant not in mpi or (beyond_one and not one_process)

    kept = [{key: {v: s for v, s in options.items() if runs(key[1], v)}
             for key, options in times.items()} for times in (measured, predicted)]
    kept = [{key: options for key, options in times.items() if options} for times in kept]
    left = sorted({v for (_, ranks, _), options in every if ranks == 1 for v in options
                   if not runs(1, v)})
    notes = [f"{len(left)} MPI variant(s)' one-rank times left out: one rank runs the one-process "
             "variants, which need no MPI"] if left and beyond_one else []
    return kept[0], kept[1], notes


def ranks_of(row: dict) -> int:
    """A store row's MPI ranks: 1 where it has none (written before schema 5)."""
    ranks = row.get("ranks")
    return 1 if ranks is None or ranks != ranks else int(ranks)


def step_regions(machine: Machine, vectors: int, threads: int) -> list[tuple]:
    """(level, n_low, n_high) of the ranges of n in which one thread's share of a time step
    (vectors x n doubles split over threads) first fits a level, as predict's step_level finds."""
    work = ELEMENT_BYTES * vectors * N / threads
    out, low = [], 1
    for name, capacity in capacities(machine, threads):
        high = None if capacity is None else border(work, capacity)
        if high is None:
            out.append((name, low, None))
            break
        if high > low:
            out.append((name, low, high))
            low = high
    return out


def dispatch_table(measured: dict, predicted: dict, machine: Machine, vectors: int,
                   method: str, ivp: str, hardware_id: str, notes=(),
                   candidates: int = 1) -> DispatchTable:
    """Rules for every layout (ranks, threads) measured or predicted and every region of n at it:
    the regions where one core's share of a time step (split over ranks x threads cores of a
    node) first fits a level; at each, the variant measured fastest on those ranks with up to
    that many threads, else predicted best, else the neighbouring region's choice. A measured
    range keeps up to `candidates` options: its choice and the next best measured there."""
    notes = list(notes)
    rules = []
    for ranks, threads in sorted({(p, t) for _, p, t in measured}
                                 | {(p, t) for _, p, t in predicted}):
        where = f"threads {threads}" if ranks == 1 else f"{ranks} ranks x threads {threads}"
        regions = step_regions(machine, vectors, ranks * threads)
        chosen: dict = {}               # region index -> Rule
        measured_sizes: dict = {}       # region index -> its sizes' measured options
        for index, (level, low, high) in enumerate(regions):
            sizes = {n: _options(measured, n, ranks, threads) for n, p, t in measured
                     if (p, t) == (ranks, threads) and low <= n and (high is None or n < high)}
            if sizes:
                (variant, run), basis, note = _choose(sizes, "measured fastest")
                if note:
                    notes.append(f"{where}, {level}: {note}")
                medians = tuple((n, sizes[n][(variant, run)]) for n in sorted(sizes)
                                if (variant, run) in sizes[n])
                chosen[index] = Rule(ranks, threads, low, high, level, variant, run, True, basis,
                                     medians)
                measured_sizes[index] = sizes
        chosen = _fewer_variants(chosen, measured_sizes, [r.variant for r in rules])
        if candidates > 1:
            chosen = {index: replace(rule, candidates=_best_options(
                          measured_sizes[index], (rule.variant, rule.run_threads), candidates))
                      for index, rule in chosen.items()}
        for index, (level, low, high) in enumerate(regions):
            if index in chosen:
                continue
            sizes = {n: {(v, threads): s for v, s in options.items()}
                     for (n, p, t), options in predicted.items()
                     if (p, t) == (ranks, threads) and low <= n and (high is None or n < high)}
            if sizes:
                (variant, run), basis, _ = _choose(sizes, "offline prediction's rank 1")
                chosen[index] = Rule(ranks, threads, low, high, level, variant, run, False, basis)
        known = dict(chosen)
        for index, (level, low, high) in enumerate(regions):
            if index in known:
                continue
            near = min(known, key=lambda i: (abs(i - index), not known[i].measured, i))
            source = known[near]
            chosen[index] = Rule(ranks, threads, low, high, level, source.variant,
                                 source.run_threads, False,
                                 f"the neighbouring {source.level} range's "
                                 f"{'measured' if source.measured else 'predicted'} choice")
        rules += [chosen[index] for index in sorted(chosen)]
    return DispatchTable(method, ivp, hardware_id, vectors, tuple(rules), tuple(notes))


def tied_options(sizes: dict) -> list:
    """The options (variant, run threads) measured at every size and within RACE_GAP of each
    size's fastest: a gap the race calls too small to matter."""
    every = set.intersection(*(set(options) for options in sizes.values()))
    return sorted(o for o in every if all(
        options[o] <= min(options.values()) * (1 + RACE_GAP) for options in sizes.values()))


def _fewer_variants(chosen: dict, measured_sizes: dict, before: list) -> dict:
    """Each measured range's choice, swapped for an option tied with it (tied_options) whose
    variant other ranges chose (before: the variants of earlier layouts' rules), the most used
    first: a library of fewer variants at no measurable cost."""
    used = Counter(before + [rule.variant for rule in chosen.values()])
    out = dict(chosen)
    for index, sizes in sorted(measured_sizes.items()):
        rule = chosen[index]
        used[rule.variant] -= 1
        tied = [o for o in tied_options(sizes) if o[0] != rule.variant and used[o[0]] > 0]
        variant, run = max(tied, key=lambda o: (used[o[0]], -sum(sizes[n][o] for n in sizes)),
                           default=(rule.variant, rule.run_threads))
        if used[variant] <= used[rule.variant]:
            used[rule.variant] += 1
            continue
        used[variant] += 1
        medians = tuple((n, sizes[n][(variant, run)]) for n in sorted(sizes))
        out[index] = replace(rule, variant=variant, run_threads=run, median_s=medians,
                             basis=f"{rule.basis}; tied within {100 * RACE_GAP:g}% at every size "
                                   f"with {_name((rule.variant, rule.run_threads))}, chosen as "
                                   "another range's choice (fewer variants in the library)")
    return out


def _best_options(sizes: dict, choice: tuple, count: int) -> tuple:
    """choice and the count - 1 other options measured at every size of the range of least
    summed time relative to each size's best."""
    every = set.intersection(*(set(options) for options in sizes.values()))
    score = {o: sum(options[o] / min(options.values()) for options in sizes.values())
             for o in every if o != choice}
    return (choice, *sorted(score, key=lambda o: (score[o], o))[:count - 1])


def _options(measured: dict, n: int, ranks: int, threads: int) -> dict:
    """(variant, run threads) -> seconds at n on `ranks` ranks, over every thread count up to
    threads."""
    return {(variant, t): seconds for (size, p, t), times in measured.items()
            if size == n and p == ranks and t <= threads for variant, seconds in times.items()}


def _choose(sizes: dict, how: str) -> tuple:
    """The option fastest at every size (else the lowest summed time relative to each size's best,
    among those known at the most sizes), its basis and a note when the sizes disagree."""
    best = {n: min(options.values()) for n, options in sizes.items()}
    winners = {n: min(options, key=lambda o: (options[o], o)) for n, options in sizes.items()}
    coverage: dict = {}
    for options in sizes.values():
        for option in options:
            coverage[option] = coverage.get(option, 0) + 1
    most = max(coverage.values())
    score = {o: sum(sizes[n][o] / best[n] for n in sizes if o in sizes[n])
             for o, count in coverage.items() if count == most}
    choice = min(score, key=lambda o: (score[o], o))
    at = ", ".join(f"n={n}" for n in sorted(sizes))
    basis = f"{how} at {at}"
    if len(set(winners.values())) == 1:
        return choice, basis, ""
    per_size = "; ".join(f"n={n}: {_name(winners[n])}" for n in sorted(sizes))
    summed = ", ".join(f"{_name(o)} {score[o]:.3f}" for o in sorted(score, key=score.get)[:3])
    basis = f"{how} by summed time relative to each size's best at {at}"
    return choice, basis, (f"the sizes disagree ({per_size}); chose {_name(choice)} by summed "
                           f"time relative to each size's best ({summed})")


def _name(option: tuple) -> str:
    variant, threads = option
    return f"{variant} ({threads} thread{'s' if threads != 1 else ''})"


def _positive(value) -> bool:
    return value is not None and math.isfinite(float(value)) and float(value) > 0
