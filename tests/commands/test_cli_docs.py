"""docs/cli.md and --help against the parser and the strategy spellings: every command, option and default documented, none that the parser lacks, every strategy spelled as describe.strategy.FORMS spells it."""

from __future__ import annotations

import argparse
import re

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.strategy import FORMS, SAMPLE_FORM, parse_strategy
from hybridtune.commands.main import _parser

DOCS = PROJECT_ROOT / "docs"
CLI_MD = (DOCS / "cli.md").read_text()
# options of other programs that docs/cli.md quotes: sbatch's and srun's
FOREIGN = {"--signal", "--overlap", "--mpi"}
_NAMES = "|".join(map(re.escape, FORMS))
_TOKEN = re.compile(rf"(?<![\w\[+-])(?:(?:{_NAMES})(?:[:\[][^\s,()`]*)?(?:\+sample:[^\s,()`]+)?"
                    r"|\+sample:[^\s,()`]+)")


def commands(parser=None, path=()) -> dict:
    """'store merge' -> its parser, for every command the parser runs (nested ones by path)."""
    parser = parser or _parser()
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(commands(sub, path + (name,)))
    return found or {" ".join(path): parser}


def options(parser) -> list:
    """The option actions of one command, --help left out."""
    return [action for action in parser._actions
            if action.option_strings and not isinstance(action, argparse._HelpAction)]


def has_option(text: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def sections() -> dict:
    """Heading -> the text under it, for each `## ` heading of docs/cli.md."""
    parts = re.split(r"^## (.+)$", CLI_MD, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def section_of(command: str) -> str:
    found = [text for heading, text in sections().items()
             if command in heading.split(" and ")]
    assert len(found) == 1, f"docs/cli.md: expected one section `## {command}`"
    return found[0]


def usages(command: str) -> list:
    """The bold usage lines (**`hybridtune COMMAND ...`**) of a command's section."""
    found = re.findall(r"\*\*`(hybridtune [^`]*)`\*\*", section_of(command))
    mine = [" ".join(usage.split()) for usage in found
            if (usage + " ").startswith(f"hybridtune {command} ")]
    assert mine, f"docs/cli.md: no usage line **`hybridtune {command} ...`**"
    return mine


def passages(text: str) -> list:
    """Paragraphs, and each bullet of a list on its own."""
    return [item for block in re.split(r"\n\s*\n", text)
            for item in re.split(r"\n(?=- )", block)]


def default_words(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


COMMANDS = commands()


def test_the_command_table_and_sections_name_exactly_the_parsers_commands():
    table = CLI_MD.split("| command |", 1)[1].split("\n\n", 1)[0]
    listed = {name for row in table.splitlines()[2:]
              for name in re.findall(r"`([^`]+)`", row.split("|")[1])}
    assert listed == set(COMMANDS)
    anchors = set(re.findall(r"\]\(#([\w-]+)\)", table))
    slugs = {re.sub(r"[^\w -]", "", heading.lower()).replace(" ", "-") for heading in sections()}
    assert anchors <= slugs
    named = {part for heading in sections() if heading[0].islower()
             for part in heading.split(" and ")}
    assert named == set(COMMANDS)


def test_docs_run_no_command_the_parser_lacks():
    run = re.findall(r"hybridtune ([a-z][\w-]*)(?: ([a-z][\w-]*))?", CLI_MD)
    unknown = {" ".join(words) for words in run
               if words[0] not in COMMANDS and " ".join(words) not in COMMANDS}
    assert not unknown


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_and_default_is_documented_in_its_section(command):
    text = section_of(command)
    usage = " ".join(usages(command))
    for action in options(COMMANDS[command]):
        for option in action.option_strings:
            assert has_option(text, option), f"{command} {option}: not in docs/cli.md"
        assert any(has_option(usage, option) for option in action.option_strings), \
            f"{command} {action.option_strings}: not in its usage line"
        if action.default in (None, False, [], argparse.SUPPRESS):
            continue
        said = re.compile(rf"default:?\s+`?{re.escape(default_words(action.default))}(?![\w]|\.\d)")
        assert any(said.search(passage) and any(has_option(passage, option)
                                                for option in action.option_strings)
                   for passage in passages(text)), \
            f"{command} {action.option_strings[-1]}: default {action.default!r} not in docs"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_usage_lines_name_only_the_commands_options(command):
    mine = {option for action in options(COMMANDS[command]) for option in action.option_strings}
    for usage in usages(command):
        named = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", usage))
        assert named <= mine, f"{usage}: {sorted(named - mine)} not options of {command}"


def test_docs_name_no_option_the_parser_lacks():
    known = {option for parser in COMMANDS.values() for action in options(parser)
             for option in action.option_strings} | {"--help", "--version"}
    named = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", CLI_MD))
    assert named - FOREIGN <= known, sorted(named - FOREIGN - known)


def spellings(text: str) -> set:
    """The strategy spellings a text shows with placeholders (preselect:P, +sample:S, ...); each
    concrete one (preselect:5+sample:0.25) must parse, in whole or beside a placeholder part."""
    forms = set(FORMS.values()) | {SAMPLE_FORM}
    shown = set()
    for token in _TOKEN.findall(text):
        token = token.rstrip(".;:")
        if token in FORMS and token != "run_all":
            continue        # a bare name in prose
        own, plus, sample = token.partition("+")
        parts = [own, plus + sample] if own and plus else [token]
        if all(part not in forms for part in parts):
            parse_strategy(token)
            continue
        for part in parts:
            if part in forms:
                shown.add(part)
            else:
                parse_strategy(part)
    return shown


def help_text(command: str, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    return " ".join(COMMANDS[command].format_help().split())


def test_tune_help_shows_exactly_the_registrys_spellings(monkeypatch):
    assert spellings(help_text("tune", monkeypatch)) == set(FORMS.values()) | {SAMPLE_FORM}


def test_no_help_shows_a_spelling_the_registry_lacks(monkeypatch):
    for command in COMMANDS:
        spellings(help_text(command, monkeypatch))


@pytest.mark.parametrize("page", ["cli.md", "formats.md"])
def test_the_docs_show_exactly_the_registrys_spellings(page):
    quoted = " ".join(re.findall(r"`([^`\n]+)`", (DOCS / page).read_text()))
    assert spellings(quoted) == set(FORMS.values()) | {SAMPLE_FORM}


@pytest.mark.parametrize("page", [*sorted(DOCS.glob("*.md")), PROJECT_ROOT / "README.md"],
                         ids=lambda page: page.name)
def test_no_page_shows_a_spelling_the_registry_lacks(page):
    spellings(" ".join(re.findall(r"`([^`\n]+)`", page.read_text())))


def test_a_wrong_spelling_is_caught():
    with pytest.raises(ValueError):
        spellings("--strategy hybrid[:P]")
    assert spellings("top_k:K or hybrid[:E], each +sample:S") == {"top_k:K", "hybrid[:E]",
                                                                 "+sample:S"}


def test_errors_quote_the_registrys_spellings():
    with pytest.raises(ValueError) as error:
        parse_strategy("fastest")
    assert spellings(str(error.value)) == set(FORMS.values()) | {SAMPLE_FORM}
