"""A second host's ground truth for tests: the fixture's rows as made-up other hardware would time them.

It cannot be measured on this one machine: a faster clock for compute-bound variants, a narrower
cache for the larger size, and another hardware id.
"""

import numpy as np

from hybridtune.learn.table import Rows


def other_hardware(rows: Rows) -> Rows:
    """The fixture as measured on made-up other hardware (see the module's docstring)."""
    frame = rows.frame.copy()
    compute = np.array([f.get("share_T_comp", 0.0) for f in frame["features"]])
    large = frame["n"].to_numpy() > 1000
    factor = np.exp(-0.3 * compute + np.where(large, 0.25, 0.0)
                    + 0.05 * np.sin(np.arange(len(frame))))
    for column in ("median_s", "ci_low_s", "ci_high_s"):
        frame[column] = frame[column] * factor
    frame["hardware_id"] = "made-up-other-hardware"
    return Rows(frame, rows.feature_schema, rows.machine_sha256)
