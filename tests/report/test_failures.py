"""Failures grouped by cause: what differs between failures of one cause, and what tells causes apart."""

from __future__ import annotations

from hybridtune.report.failures import (cause_key, failure_lines, failures_json, group_failures,
                                        readable, without_choice_line)

TOO_LONG = "OSError: [Errno 36] File name too long: '/tmp/{}/.kernel.c_kerncraft/host.yml/gcc/-O3_-march=znver3_-mavx512f'"
GCC = ("/root/.cache/hybridtune/build/{}/variant.c: In function 'step':\n"
       "/root/.cache/hybridtune/build/{}/variant.c:12:3: error: 'x' undeclared")


def test_paths_and_compiler_chatter_leave_the_readable_cause():
    assert readable(TOO_LONG.format("a")) == "OSError: [Errno 36] File name too long"
    assert readable(GCC.format("ab", "ab")) == "error: 'x' undeclared"
    assert readable("") == ""


def test_one_cause_whatever_its_paths_numbers_and_loops():
    assert cause_key(TOO_LONG.format("a")) == cause_key(TOO_LONG.format("b/c"))
    wrong = "after 20 steps the state differs from the reference by {} (relative max norm)"
    assert cause_key(wrong.format("3.2e-02")) == cause_key(wrong.format("0.5"))
    located = "ValueError: Unknown architecture 'x'. (loop {} in {})"
    assert cause_key(located.format("544d2c77570330825e83", "L2")) == cause_key(
        located.format("0123456789abcdef", "MEM"))


def test_different_causes_stay_apart():
    keys = {cause_key(m) for m in (TOO_LONG.format("a"), GCC.format("a", "a"),
                                   "killed by signal SIGSEGV", "killed by signal SIGBUS",
                                   "no answer within 5 s")}
    assert len(keys) == 5


def test_groups_most_frequent_first_with_a_line_each_and_every_member_in_json():
    failures = ([(f"RHS/RHS_jl/{i}", TOO_LONG.format(i)) for i in range(114)]
                + [("A_1", "killed by signal SIGSEGV")])
    groups = group_failures(failures)
    assert [g.count for g in groups] == [114, 1]
    assert failure_lines(groups, 115, "kerncraft analyses") == [
        "114 of 115 kerncraft analyses failed: OSError: [Errno 36] File name too long "
        "(first: RHS/RHS_jl/0)",
        "1 of 115 kerncraft analyses failed: killed by signal SIGSEGV (first: A_1)"]
    listed = failures_json(groups)
    assert [len(g["failed"]) for g in listed] == [114, 1]
    assert listed[0]["failed"][7] == {"name": "RHS/RHS_jl/7", "message": TOO_LONG.format(7)}


def test_the_last_line_counts_configurations_by_why():
    line = without_choice_line([("Cusp n=600", "every shortlisted variant failed (crash)"),
                                ("Cusp n=6000", "every shortlisted variant failed (crash)"),
                                ("Wave1D n=600", "nothing measured")], 16, "no measured choice")
    assert line == ("3 of 16 configurations have no measured choice: every shortlisted variant "
                    "failed (crash) in 2 (first: Cusp n=600); nothing measured in 1 (first: "
                    "Wave1D n=600)")


def test_a_quoted_operator_is_the_cause_a_quoted_path_is_not():
    """kerncraft's KeyError on an operator keeps its text; a path in quotes still goes."""
    assert readable("KeyError: '/'") == "KeyError: '/'"
    assert failure_lines(group_failures([("RHS/RHS_jl/part0", "KeyError: '%'")]), 1,
                         "kerncraft analyses") == [
        "1 of 1 kerncraft analyses failed: KeyError: '%' (first: RHS/RHS_jl/part0)"]
    assert readable("OSError: cannot open '/tmp/x/kernel.c'") == "OSError: cannot open"
