"""OSACA's speed-ups: a line parsed again is OSACA's own parse, a long loop's dependencies searched
without child processes."""

from __future__ import annotations


import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.predict import osaca_speedups
from hybridtune.predict.kerncraft_adapter import analyse

SKYLAKE = str(PROJECT_ROOT / "data" / "machines" / "SkylakeSP_Gold-6148.yml")
SAMPLES = ((10 ** 7, {"n": 10 ** 7}),)

pytestmark = pytest.mark.slow


# lines of gcc's AT&T output: instructions, a label, a directive, a comment
ASSEMBLY = ("\tvmovupd\t(%rax,%rdx,8), %zmm1", "\tvfmadd231pd\t%zmm2, %zmm1, %zmm0\t# fused",
            ".L3:", "\t.p2align 4", "# a comment", "\taddq\t$64, %rax")


def test_a_line_parsed_again_is_osaca_own_parse_and_a_form_of_its_own():
    osaca_speedups.patch_osaca()
    from osaca.parser.parser_x86att import ParserX86ATT
    parser, memoised = ParserX86ATT(), ParserX86ATT.parse_line
    assert memoised.memoised
    for number, line in enumerate(ASSEMBLY * 2, start=1):
        form = parser.parse_line(line, number)
        assert repr(form) == repr(memoised.original(parser, line, number))
        assert form.line_number == number
    first = parser.parse_line(ASSEMBLY[0], 1)
    first.operands.clear()              # the analysis writes into the forms it is given
    first.mnemonic = "changed"
    again = parser.parse_line(ASSEMBLY[0], 2)
    assert again.mnemonic == "vmovupd" and len(again.operands) == 2
    with pytest.raises(ValueError, match="Could not parse"):
        parser.parse_line("\tnot an instruction ((", 3)


def test_a_long_loop_s_dependencies_are_searched_in_the_analysis_own_process(tmp_path,
                                                                            monkeypatch):
    osaca_speedups.patch_osaca()
    from osaca.semantics import kernel_dg

    def no_manager(*args, **kwargs):    # a fake: OSACA's parallel search would start one here
        raise RuntimeError("OSACA started a Manager")

    monkeypatch.setattr(kernel_dg, "Manager", no_manager)
    arrays = [f"a{i}" for i in range(16)]   # a loop of well over 50 instructions
    code = "".join(f"double {a}[n];\n" for a in arrays) + "double s0;\n" + \
        "for (long j = 0; j < n; ++j) {\n  a0[j] = " + \
        " + ".join(f"s0 * {a}[j] * {a}[j]" for a in arrays[1:]) + ";\n}\n"
    [result] = analyse(code, str(tmp_path / "k"), SKYLAKE, SAMPLES, "ECM")
    assert result.status == "ok", result.message
