"""`shoe2mqtt replay`: the auditor's tool reads a round log and says what the engine settled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.cli import main
from daemon.round_log import ReplayError, replay
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.errors import EventError
from rules.events import event_from_mapping

EXAMPLES = Path(__file__).parents[2] / "examples"
TABLE = {
    "type": "table",
    "id": "bj-1",
    "game": "blackjack",
    "limits": {
        "blackjack": {"min": "10", "max": "1000"},
        "twenty_point_bonus": {"min": "5", "max": "100"},
    },
}


def _log(*records: object) -> list[str]:
    return [json.dumps(record) for record in records]


@pytest.mark.parametrize("log", sorted(EXAMPLES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_replay_matches_the_engine_fed_directly(log: Path) -> None:
    """The replay tool is the engine: same events, same outputs, in the same order."""
    lines = log.read_text(encoding="utf-8").splitlines()
    settings = json.loads(lines[0])
    del settings["type"], settings["format"]
    engine = TableEngine(TableConfig.from_mapping(settings))
    expected: list[dict[str, object]] = []
    for line in lines[1:]:
        try:
            outputs = engine.apply(event_from_mapping(json.loads(line)))
        except EventError:  # rejected events are reported, not raised, by replay
            continue
        expected.extend(output.to_mapping() for output in outputs)
    assert [r for r in replay(lines, everything=True) if r["type"] != "rejected"] == expected


def test_replaying_twice_gives_the_same_output() -> None:
    lines = (EXAMPLES / "triple-attack-dealer-22.jsonl").read_text(encoding="utf-8").splitlines()
    assert list(replay(lines)) == list(replay(lines))


def test_the_queen_of_hearts_example_settles_as_2_24_e_1_ii_says() -> None:
    """Reader in use, ten upcard, no dealer blackjack: the pair is paid last, at 125 to 1."""
    lines = (EXAMPLES / "blackjack-queen-of-hearts.jsonl").read_text(encoding="utf-8").splitlines()
    records = list(replay(lines))
    settlements = [r for r in records if r["type"] == "settlement"]
    assert [(s["seat"], s["outcome"], s["won"]) for s in settlements] == [
        (5, "no_20", "0.00"),
        (3, "suited_20", "225.00"),
        (1, "queen_of_hearts_pair", "1250.00"),
    ]
    assert settlements[-1]["floorperson"] is True
    notices = [r for r in records if r["type"] == "notice"]
    assert [(n["kind"], n["seat"]) for n in notices] == [("floorperson_required", 1)]


def test_a_rejected_event_is_reported_and_the_replay_goes_on() -> None:
    records = list(
        replay(
            _log(
                TABLE,
                {"type": "wager", "seat": 1, "kind": "twenty_point_bonus", "amount": "5.00"},
                {"type": "wager", "seat": 1, "kind": "blackjack", "amount": "25.00"},
                {"type": "wager", "seat": 1, "kind": "twenty_point_bonus", "amount": "5.00"},
            ),
            everything=True,
        )
    )
    assert records[0] == {
        "type": "rejected",
        "line": 2,
        "code": "wager_rejected",
        "message": "seat 1 twenty_point_bonus: needs a blackjack wager first (13:69F-2.24(c))",
    }
    assert [r["type"] for r in records[1:]] == ["round_opened", "wager_accepted", "wager_accepted"]


@pytest.mark.parametrize(
    ("records", "line", "field"),
    [
        ([], 1, "type"),
        ([{"type": "card", "card": "QH"}], 1, "type"),
        ([{**TABLE, "decks": 1}], 1, "decks"),
        ([{**TABLE, "format": 4}], 1, "format"),
        ([TABLE, {"type": "wager", "seat": 1, "kind": "blackjack", "amount": 25.0}], 2, "amount"),
        ([TABLE, {"type": "card", "card": "1X"}], 2, "card"),
        ([TABLE, {"type": "teleport"}], 2, "type"),
        ([TABLE, {"type": "action", "action": "stand", "seat": 0}], 2, "seat"),
        ([TABLE, {"type": "shuffle", "extra": 1}], 2, "extra"),
        ([TABLE, [1, 2]], 2, "json"),
    ],
)
def test_a_malformed_line_names_the_line_and_the_field(
    records: list[object], line: int, field: str
) -> None:
    with pytest.raises(ReplayError) as caught:
        list(replay(_log(*records)))
    assert (caught.value.line, caught.value.field) == (line, field)


def test_a_line_that_is_not_json_is_named() -> None:
    with pytest.raises(ReplayError) as caught:
        list(replay([json.dumps(TABLE), "{not json"]))
    assert (caught.value.line, caught.value.field) == (2, "json")


def test_cli_prints_json_lines_and_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "round.jsonl"
    log.write_text((EXAMPLES / "double-attack-three-eights.jsonl").read_text(encoding="utf-8"))
    assert main(["replay", str(log)]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(p["seat"], p["outcome"], p["won"]) for p in printed] == [
        (6, "three_eights_coloured", "1250.00"),
        (2, "three_eights_coloured", "500.00"),
    ]


def test_cli_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    text = (EXAMPLES / "triple-attack-dealer-22.jsonl").read_text(encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["replay", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 4


def test_cli_malformed_line_exits_non_zero_with_the_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text("\n".join(_log(TABLE, {"type": "card"})) + "\n", encoding="utf-8")
    assert main(["replay", str(log)]) == 1
    assert capsys.readouterr().err == (
        f"shoe2mqtt replay: {log}: line 2: card: "
        "must be card text such as 'QH' or '10S', not None\n"
    )


def test_cli_missing_file_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


CUT_SHORT = (
    "not JSON: the line ends inside the quoted text that opens at column 10: it was cut "
    "short, or a closing quote is missing"
)
NO_FIELD_NAME = (
    "the line ends too soon, as if cut short: a field name in double quotes is missing at column 18"
)
TRAILING = "not JSON: more text follows the JSON object, at column 18: one object a line"


@pytest.mark.parametrize(
    ("line", "says"),
    [('{"type": "car', CUT_SHORT), ('{"type": "card", ', NO_FIELD_NAME),
     ('{"type": "card"} x', TRAILING)],
)  # fmt: skip
def test_cli_says_in_words_what_is_wrong_with_a_line_that_is_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, says: str
) -> None:
    """A truncated log (a copy that lost its end) is named as such, with its line number."""
    log = tmp_path / "cut.jsonl"
    log.write_text(json.dumps(TABLE) + "\n" + line + "\n", encoding="utf-8")
    assert main(["replay", str(log)]) == 1
    assert capsys.readouterr().err == f"shoe2mqtt replay: {log}: line 2: json: {says}\n"
