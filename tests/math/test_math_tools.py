"""`shoe2mqtt analyze` and `shoe2mqtt simulate` as an engineer runs them."""

from __future__ import annotations

import io
import json
import shutil
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from daemon.cli import build_parser
from daemon.cli.analyze import analyze, house_edge_series
from daemon.cli.simulate import simulate

EXAMPLES = Path(__file__).parents[2] / "examples"


def run(argv: list[str]) -> tuple[int, str, str]:
    args = build_parser().parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    command = analyze if args.command == "analyze" else simulate
    return command(args, out, err), out.getvalue(), err.getvalue()


def test_analyze_prints_each_built_in_paytable() -> None:
    code, out, err = run(["analyze", "--game", "blackjack", "--decks", "6"])
    assert (code, err) == (0, "")
    assert "20 point bonus wager (13:69F-2.24): 6 standard decks, paytable A" in out
    assert "house edge       24.7089 %" in out  # paytable A
    assert "house edge       17.6391 %" in out  # paytable B
    assert "aggregate limit" in out  # 2.24(h) is ignored, and says so


def test_analyze_json_gives_exact_fractions_and_long_decimals() -> None:
    code, out, _ = run(["analyze", "--json", "--decks", "2", "8"])
    assert code == 0
    document = json.loads(out)
    analyses = document["analyses"]
    assert len(analyses) == 2 * (2 + 1 + 1)  # per deck count: A, B, regulation, dealer
    for analysis in analyses:
        rows = analysis.get("outcomes") or analysis["totals"]
        probabilities = [Fraction(row["probability"]["exact"]) for row in rows]
        assert sum(probabilities) == 1
        for row, exact in zip(rows, probabilities, strict=True):
            decimal = Decimal(row["probability"]["decimal"])
            assert abs(decimal - Decimal(exact.numerator) / exact.denominator) <= abs(
                decimal
            ) * Decimal("1e-12")
            # At least 12 significant digits, unless the decimal is the exact value.
            digits = len(decimal.normalize().as_tuple().digits)
            assert digits >= 12 or Fraction(decimal) == exact
    assert document["seconds"] < 1.0


def test_analyze_reads_a_tables_configuration(tmp_path: Path) -> None:
    text = (EXAMPLES / "shoe2mqtt.toml").read_text(encoding="utf-8")
    custom = text.replace(
        'paytable = "A"',
        'paytable = { queen_of_hearts_pair_dealer_blackjack = "1000 to 1", '
        'queen_of_hearts_pair = "125 to 1", matched_20 = "19 to 1", suited_20 = "9 to 1", '
        'any_20 = "5 to 1" }',
    )
    config = tmp_path / "shoe2mqtt.toml"
    config.write_text(custom, encoding="utf-8")
    code, out, err = run(["analyze", "--config", str(config), "--table", "bj-1"])
    assert code == 0
    # The example's broker certificate is not on this machine: an analysis never connects,
    # so the broker's files are not read, and their absence is no obstacle.
    assert err == ""
    assert f"paytable custom [table bj-1 in {config}]" in out
    assert "5 to 1" in out


def test_analyze_refuses_a_paytable_below_the_regulation(tmp_path: Path) -> None:
    text = (EXAMPLES / "shoe2mqtt.toml").read_text(encoding="utf-8")
    config = tmp_path / "shoe2mqtt.toml"
    config.write_text(text.replace('paytable = "A"', 'paytable = "Z"'), encoding="utf-8")
    code, _, err = run(["analyze", "--config", str(config)])
    assert code == 1
    assert "table[1].paytable" in err


def test_analyze_reads_a_round_logs_table_line() -> None:
    log = EXAMPLES / "double-attack-three-eights.jsonl"
    code, out, _ = run(["analyze", "--round-log", str(log)])
    assert code == 0
    assert "Double Attack optional bonus wager (13:69F-26.6): 8 Spanish decks" in out
    assert "house edge       8.0064 %" in out


def test_analyze_dealer_totals_for_triple_attack() -> None:
    code, out, _ = run(["analyze", "--game", "triple_attack"])
    assert code == 0
    assert "8 Spanish decks, dealer hits soft 17" in out
    assert "exactly 22" in out


def test_analyze_plots_the_house_edge_against_the_decks(tmp_path: Path) -> None:
    chart = tmp_path / "edge.png"
    code, out, _ = run(["analyze", "--game", "double_attack", "--plot", str(chart)])
    assert code == 0
    assert f"chart written to {chart}" in out
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_house_edge_series_covers_one_to_eight_decks() -> None:
    series = house_edge_series([])
    assert set(series) == {
        "20 point bonus, paytable A",
        "20 point bonus, paytable B",
        "Double Attack bonus, regulation, Spanish decks",
        "Double Attack bonus, regulation, standard decks",
    }
    for points in series.values():
        assert [decks for decks, _ in points] == list(range(1, 9))
        edges = [edge for _, edge in points]
        assert edges == sorted(edges, reverse=True)  # more decks, lower edge, every line


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["analyze", "--paytable", "A"], "exactly one --game"),
        (["analyze", "--game", "blackjack", "--paytable", "C"], "no blackjack paytable 'C'"),
        (["analyze", "--decks", "0"], "at least 1"),
        (["analyze", "--config", "a.toml", "--round-log", "b.jsonl"], "not both"),
        (["simulate", "--rounds", "0"], "at least 1"),
        (["simulate", "--game", "blackjack", "--decks", "1"], "at least two decks"),
    ],
)
def test_wrong_options_exit_2_and_say_why(argv: list[str], message: str) -> None:
    code, out, err = run(argv)
    assert (code, out) == (2, "")
    assert message in err


def test_a_missing_table_or_file_exits_1(tmp_path: Path) -> None:
    config = tmp_path / "shoe2mqtt.toml"
    shutil.copy(EXAMPLES / "shoe2mqtt.toml", config)
    code, _, err = run(["analyze", "--config", str(config), "--table", "nope"])
    assert code == 1
    assert "no table with id 'nope'" in err
    code, _, err = run(["analyze", "--round-log", str(tmp_path / "missing.jsonl")])
    assert code == 1
    assert "cannot read" in err


def test_simulate_prints_the_comparison_and_its_rate() -> None:
    code, out, err = run(["simulate", "--game", "double_attack", "--rounds", "3000"])
    assert (code, err) == (0, "")
    assert "double_attack table simulate-double-attack: 8 Spanish decks" in out
    assert "three eights of one suit" in out
    assert "rounds a second (seed 1)" in out
    assert "every line agrees" in out


def test_simulate_json_is_reproducible_from_its_seed() -> None:
    argv = ["simulate", "--game", "triple_attack", "--rounds", "1500", "--seed", "9", "--json"]
    first, second = json.loads(run(argv)[1]), json.loads(run(argv)[1])
    for document in (first, second):
        for key in ("seconds", "rounds_per_second"):
            document.pop(key)
    assert first == second
    (table,) = first["tables"]
    assert table["rounds"] == 1500
    assert {row["wager"] for row in table["returns"]} == {
        "first_attack",
        "second_attack",
        "third_attack",
    }


def test_simulate_json_is_strict_json_even_for_an_outcome_never_seen() -> None:
    # Ten rounds see no three eights: their standard error exists, their deviation is 0 or
    # finite, and nothing is NaN or infinite (which JSON cannot hold).
    code, out, _ = run(["simulate", "--game", "double_attack", "--rounds", "10", "--json"])
    assert code in (0, 1)
    document = json.loads(out, parse_constant=_refuse)
    assert document["tables"][0]["rounds"] == 10


def _refuse(name: str) -> None:
    raise AssertionError(f"not JSON: {name}")
