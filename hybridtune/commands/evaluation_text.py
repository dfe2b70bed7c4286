"""The evaluation as text: the strategy table, accuracy, reliability and the offline model's errors.

Also the transfer between configurations and what a space-filling share of the measurements buys.
"""

from __future__ import annotations

from hybridtune.strategies.transfer import LABELS, LEVEL


def share_lines(valued: list) -> list[str]:
    """What each space-filling share of the training runs buys, as text."""
    if not valued:
        return []
    lines = ["a space-filling share of the training runs' measurements (each IVP left out; its "
             "model trained only on what the runs measured of the others):",
             f"  {'training runs':<24} {'measured':>8} {'rel.err':>7} {'tau':>5}   then hybrid: "
             "measured, loss mean, loss<=3%"]
    lines += [f"  {v['strategy']:<24} {v['training_measured_per_configuration']:8.1f} "
              f"{v['median_rel_error']:7.3f} {v['kendall_tau']:5.2f}   "
              f"{v['hybrid_measured_mean']:.1f}, {v['hybrid_loss_pct_mean']:.2f}%, "
              f"{100 * v['hybrid_frac_loss_le_3pct']:.0f}%" for v in valued]
    return lines


def reliability_lines(table: dict, who: str = "hybrid") -> list[str]:
    """Hybrid's stop chances against the outcomes, as text."""
    if not table:
        return []
    lines = [f"{who}: its chance of the event ({table['event']}) against how often it held, "
             f"{table['decisions']} decisions (observed {100 * table['observed_frequency']:.0f}%):"]
    lines += [f"  chance {b['low']:.1f}-{b['high']:.1f}: said {b['chance']:.2f}, observed "
              f"{b['observed']:.2f} ({b['decisions']} decisions)" for b in table["bins"]]
    lines.append(f"  Brier score {table['brier']:.3f} against {table['brier_constant']:.3f} for a "
                 f"constant chance: skill {table['brier_skill']:.3f}")
    return lines


def offline_error_lines(found: dict) -> list[str]:
    """How the offline model errs within the measured pools (the no-model prior's calibration),
    and the reliability of hybrid's chances on that prior, as text."""
    fits = found.get("fits", {})
    if "all" not in fits:
        return []
    e = fits["all"]
    lines = [f"the offline model's errors within {e['pools']} measured pools (hybrid's prior "
             "without a model where the kernel effects know none of a pool's kernels): its "
             f"ranking holds with slope {e['slope']:.3f} +- "
             f"{e['slope_spread']:.3f}; what that leaves: {e['shared']:.3f} smooth over the "
             f"features (Matern length {e['length']:.1f}) and {e['own']:.4f} of a variant's own"]
    return lines + reliability_lines(found.get("reliability", {}), "hybrid (no model), "
                                     "its prior the kernel effects of the other IVPs' pools")


def transfer_lines(result) -> list[str]:
    """What measurements of other configurations tell of the left-out IVPs' configurations, as
    text, beside hybrid's own numbers."""
    found = result.transfer
    if not found:
        return []
    lines = [f"orders taken from other configurations' measured times, as a model reproducing them "
             f"exactly would order ({found['configurations']} configurations; first pick within "
             "5% / measurements to one within 3%, mean):"]
    for name, label in LABELS.items():
        if name in found:
            entry = found[name]
            lines.append(f"  {label}: {100 * entry['first_within_5pct']:.0f}% / "
                         f"{entry['to_within_3pct_mean']:.1f} ({entry['configurations']} "
                         "configurations)")
    if result.hybrid_to_best.get("reached"):
        lines.append(f"  hybrid (its own order, a stop that knew the best): "
                     f"{100 * result.first_pick.get('hybrid', 0):.0f}% / "
                     f"{result.hybrid_to_best['mean']:.1f}")
    lines.append(f"  {LEVEL} in {100 * found['level_outside_other_ivps']:.0f}% of "
                 f"{found['configurations']} configurations")
    return lines


def regime_lines(regimes: dict) -> list[str]:
    lines = ["offline model per size regime (median relative error; median predicted/measured):"]
    for sha, entry in regimes.items():
        parts = [f"{name} {r['median_rel_error']:.3f}; {r['median_ratio']:.2f} ({r['rows']} rows)"
                 for name, r in entry["regimes"].items()]
        lines.append(f"  machine file {sha[:12]} ({entry['machine_file'] or 'unnamed'}): "
                     + ", ".join(parts))
    return lines


def evaluation_lines(result) -> list[str]:
    """The strategy table, the left-out-IVP accuracy and the first-pick shares as text."""
    noise = result.noise
    lines = [f"strategies on {next(iter(result.strategies.values()))['configurations']} whole-pool "
             "configurations (each IVP's models trained on the other IVPs), loss judged by the "
             "stored times (mean of passes):",
             f"  noise: {noise.get('source', 'none')}"
             + (f"; mean over {noise['seeds']} seeds [10th, 90th percentile over seeds]"
                if noise.get("seeds", 1) > 1 else ""),
             f"  {'strategy':<19} {'|L| mean':>8} {'loss mean':>9} {'median':>7} {'p90':>7} "
             f"{'max':>7} {'<=1%':>5} {'<=3%':>5} {'overhead':>9} {'gain':>7} {'score':>6}  "
             "score 95% interval"]
    for name, s in result.strategies.items():
        low, high = s["score_interval"]
        lines.append(f"  {name:<19} {s['measured_mean']:8.1f} {s['loss_pct_mean']:8.2f}% "
                     f"{s['loss_pct_median']:6.2f}% {s['loss_pct_p90']:6.2f}% "
                     f"{s['loss_pct_max']:6.1f}% {100 * s['frac_loss_le_1pct']:4.0f}% "
                     f"{100 * s['frac_loss_le_3pct']:4.0f}% "
                     f"{s['overhead_pct_mean']:8.1f}% {round(s['gain_pct_mean'], 1) + 0.0:6.1f}% "
                     f"{s['score']:6.2f}"
                     f"  [{low:.2f}, {high:.2f}]")
        spread = s.get("over_seeds")
        if spread:
            lines.append(f"  {'':<19} [{spread['measured_mean'][0]:.1f}, "
                         f"{spread['measured_mean'][1]:.1f}] loss mean "
                         f"[{spread['loss_pct_mean'][0]:.2f}%, {spread['loss_pct_mean'][1]:.2f}%]"
                         f" loss<=3% [{100 * spread['frac_loss_le_3pct'][0]:.0f}%, "
                         f"{100 * spread['frac_loss_le_3pct'][1]:.0f}%] score "
                         f"[{spread['score'][0]:.2f}, {spread['score'][1]:.2f}]")
    lines.append("left-out IVP accuracy (median relative error / mean Kendall tau per configuration):")
    for ivp, a in result.accuracy.items():
        parts = [f"{name} {a[name]['median_rel_error']:.3f}/{a[name]['kendall_tau']:.2f}"
                 for name in ("offline", "trivial", "linear", "gp")]
        lines.append(f"  {ivp:<14} {', '.join(parts)}  ({a['rows']} rows; trained on "
                     f"{a['training_rows']})")
    other = [f"{ivp} {a['gp_other_sizes']['median_rel_error']:.3f}"
             for ivp, a in result.accuracy.items() if "gp_other_sizes" in a]
    if other:
        lines.append("  gp on a size or thread count never measured, the IVP's other "
                     f"configurations measured (median relative error): {', '.join(other)}")
    shares = result.first_pick
    lines.append(f"first variant measured within 5% of the best: hybrid "
                 f"{100 * shares.get('hybrid', 0):.0f}%, offline top-1 "
                 f"{100 * shares.get('offline_top1', 0):.0f}%, a random pick "
                 f"{100 * shares.get('random', 0):.0f}% (expected)")
    to_best = result.hybrid_to_best
    if to_best.get("reached"):
        lines.append(f"hybrid's order reaches a variant within 3% of the best after "
                     f"{to_best['mean']:.1f} measurements on average (median "
                     f"{to_best['median']:g}, at most {to_best['max']}, in {to_best['reached']} of "
                     f"{len(to_best['per_configuration'])} replays): what a stop that "
                     "knew the best would measure")
    lines.extend(reliability_lines(result.reliability))
    lines.extend(offline_error_lines(result.offline_errors))
    lines.extend(transfer_lines(result))
    lines.extend(f"note: {note}" for note in result.notes)
    return lines


def pass_agreement_lines(found: dict) -> list[str]:
    """Per IVP, the Kendall tau between two passes' timings and the tau it leaves a model."""
    if not found:
        return []
    return ["", "Two passes of the same variants (Kendall tau between them; the tau the true "
                "times would reach against their mean):"] + [
        f"  {ivp:<14} {entry['kendall_tau']:.2f}; {entry['tau_ceiling']:.2f} "
        f"({entry['pairs']} variants in {entry['configurations']} configuration(s))"
        for ivp, entry in found.items()]


def feature_set_lines(found: dict) -> list[str]:
    """The feature-set comparisons: per candidate the corrected model's tau and error."""
    lines = []
    for validation, label in (("leave_one_ivp_out", "leaving one IVP out"),
                              ("leave_one_host_out", "leaving one host out")):
        if validation not in found:
            continue
        lines += ["", f"Feature sets offered to the Gaussian process, {label}:",
                  "  features            tau min  tau mean  median rel. error"]
        for name, summary in found[validation].items():
            lines.append(f"  {name:<18} {summary['kendall_tau_min']:8.2f} "
                         f"{summary['kendall_tau_mean']:9.2f} "
                         f"{summary['median_rel_error_median']:18.1%}")
    return lines


def host_transfer_lines(found: dict | None) -> list[str]:
    """Leave one host and one IVP out: per direction and IVP, hybrid's measurements to within 3%
    with the other host's model and with this host's own, and the models' accuracy."""
    if not found:
        return []
    lines = ["", f"Leaving one host and one IVP out ({', '.join(found['ivps'])}; "
             f"{found['seeds']} noise seed(s)); measured spread beyond the model's own: "
             + ", ".join(f"{name} model {value:.3f}" for name, value
                         in found["measured_spread"].items())]
    for direction in found["directions"]:
        summary = direction["to_within"]
        lines += ["", f"  {direction['from']} -> {direction['to']} (spread used "
                      f"{direction['spread_used']:.3f}, calibrated the other way): to within 3% "
                      f"{summary['transferred']:.1f} measurements with the other host's model, "
                      f"{summary['own']:.1f} with its own: ratio {summary['ratio']:.2f}",
                  "    IVP              to 3% (other / own)  loss (other / own)  tau (other / own)"]
        for ivp, entry in direction["ivps"].items():
            acc = entry["accuracy"]
            lines.append(f"    {ivp:<16} {entry['to_within']['transferred']:8.1f} / "
                         f"{entry['to_within']['own']:<8.1f} {entry['loss']['transferred']:7.2%} / "
                         f"{entry['loss']['own']:<8.2%} {acc['transferred']['kendall_tau']:6.2f} / "
                         f"{acc['own']['kendall_tau']:.2f}")
    return lines + effects_transfer_lines(found.get("kernel_effects", []))


def effects_transfer_lines(directions: list) -> list[str]:
    """Hybrid without a model on one host, its kernel effects from the other host's pools, its own
    or both hosts' (each without the IVP replayed)."""
    if not directions:
        return []
    lines = ["", "  Without a model, the kernel effects from (each fitted without the IVP "
                 "replayed): measured per configuration, loss mean (p90)"]
    for d in directions:
        cells = "; ".join(f"{name} {d[name]['measured_mean']:.1f}, {d[name]['loss_pct_mean']:.2f}% "
                          f"({d[name]['loss_pct_p90']:.2f}%)"
                          for name in ("transferred", "own", "both"))
        lines.append(f"    {d['from']} -> {d['to']}: {cells}; ratio to own "
                     f"{d['ratio_to_own']:.2f}")
    return lines


def constants_lines(found: dict | None) -> list[str]:
    """Hybrid's trained scale and stop chosen on one ground truth, scored on the other."""
    if not found:
        return []
    lines = ["", "Constants chosen on one ground truth, scored on the other (hybrid with a model "
                 "trained with the IVP left out; the Brier skill of its stop chances)"]
    for name, entry in found["directions"].items():
        lines += [f"  {name} (the ceiling loses {entry['ceiling_loss_pct']:.2f}%):",
                  "                    scale  E      Brier skill  loss mean  loss p90  measured"]
        for label, scores in (("out of sample", entry["out_of_sample"]),
                              ("its own choice", entry["in_sample"]),
                              ("shipped", entry["shipped"])):
            lines.append(f"    {label:<16}{scores['scale']:<7.2f}{scores['stop']:<7g}"
                         f"{scores['brier_skill']:11.3f} {scores['loss_pct_mean']:9.2f}% "
                         f"{scores['loss_pct_p90']:8.2f}% {scores['measured_mean']:9.1f}")
    return lines
