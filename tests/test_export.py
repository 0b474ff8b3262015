"""Streamed exports (holdem/analysis/export/records.py, ``python -m holdem.cli.export_strategy``).

An export is written a chunk of records at a time, never built whole in memory. Checked here:
the file is byte for byte the text the whole list gave before streaming (``json.dumps`` with a
one-space indent, the CSV writer), for Leduc, heads-up No-Limit and a small 3-player game, in
both formats, with and without filters; the file grows while the records are still being made;
an export that fails midway, or whose filters select nothing, leaves no temporary file and
leaves an existing ``--out`` as it was.
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest

from holdem import config as config_mod
from holdem.analysis.export import records as export
from holdem.analysis.blueprint import load_checkpoint_store
from holdem.cli.export_strategy import main
from holdem.config import ConfigError
from tests.test_multiway_views import _train

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def leduc_run(tmp_path_factory):
    config = config_mod.load(ROOT / "configs" / "leduc.yaml")
    return _train(config, 2000, tmp_path_factory.mktemp("leduc"))


@pytest.fixture(scope="module")
def three_way_run(tmp_path_factory):
    """3 players, average strategy kept preflop only: an export of every street holds both
    strategies, so its JSON names them only once its records are written."""
    config = config_mod.from_dict({
        "game": {"name": "nlhe", "num_players": 3, "stack": 20.0},
        "actions": {"preflop_open": [2.5], "preflop": [[1.0]], "flop": [[1.0]],
                    "turn": [[1.0]], "river": [[1.0]], "all_in": True,
                    "max_raises": [2, 1, 1, 1]},
        "solver": {"weighting": "linear", "discount_interval": 1000, "average_max_street": 0},
        "train": {"seed": 3}}, source="test")
    return _train(config, 2000, tmp_path_factory.mktemp("three_way"))


def _text_before_streaming(logdir, fmt, streets=None, players=None):
    """The export's text as the command built it before streaming: every record in a list,
    filtered, then ``json.dumps`` of the whole (or the CSV rows of the whole list)."""
    game, store, checkpoint = load_checkpoint_store(logdir)
    records = export.export_records(game, store, checkpoint, streets)
    records = [r for r in records
               if (not streets or export._street_of(r) in streets)
               and (not players or r["player"] in players)]
    if fmt == "json":
        return json.dumps({"game": game.name, "iterations": checkpoint.iterations,
                           "strategy": export.export_strategy_name(game, checkpoint, records),
                           "infosets": records}, indent=1) + "\n"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(export.CSV_FIELDS)
    for r in records:
        writer.writerow([
            r["player"], export._street_of(r), r.get("private", ""),
            "" if r.get("public") is None else r["public"], r["history"], r.get("bucket", ""),
            r.get("hand", ""), " ".join(r["actions"]),
            " ".join(repr(float(x)) for x in r["strategy"]), "true" if r["visited"] else "false"])
    return out.getvalue()


def _filter_args(streets, players):
    return ([a for s in streets or () for a in ("--street", s)]
            + [a for p in players or () for a in ("--player", str(p))])


def _check_same_text(logdir, tmp_path, fmt, streets=None, players=None):
    out = tmp_path / f"export.{fmt}"
    assert main(["--checkpoint", str(logdir), "--out", str(out),
                 *_filter_args(streets, players)]) == 0
    expected = _text_before_streaming(logdir, fmt, streets, players)
    assert out.read_text() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]      # no temporary file
    return expected


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("streets,players", [(None, None), (["1"], [1])])
def test_leduc_export_is_the_text_of_the_whole_list(leduc_run, tmp_path, fmt, streets,
                                                     players):
    _check_same_text(leduc_run, tmp_path, fmt, streets, players)


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("streets,players", [(None, None), (["flop", "river"], [1])])
def test_heads_up_export_is_the_text_of_the_whole_list(hunl_run, tmp_path, fmt, streets,
                                                        players):
    _check_same_text(hunl_run, tmp_path, fmt, streets, players)


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("streets,players", [
    (None, None),                          # both strategies: named once the records are out
    (["flop"], None),                      # the current strategy, named before them
    (["preflop"], [2]),                    # the average
    (["preflop", "turn"], [0, 1])])
def test_three_player_export_is_the_text_of_the_whole_list(three_way_run, tmp_path, fmt,
                                                            streets, players):
    text = _check_same_text(three_way_run, tmp_path, fmt, streets, players)
    if fmt == "json" and streets is None:
        assert json.loads(text)["strategy"].startswith("average strategy up to the preflop")


def test_the_list_and_text_functions_are_the_streamed_ones(three_way_run):
    """export_records is the chunks of iter_export_records joined (none over RECORD_CHUNK);
    write_json and write_csv of those chunks write to_json and to_csv of the list."""
    game, store, checkpoint = load_checkpoint_store(three_way_run)
    chunks = list(export.iter_export_records(game, store, checkpoint))
    assert all(0 < len(c) <= export.RECORD_CHUNK for c in chunks)
    records = export.export_records(game, store, checkpoint)
    assert [r for c in chunks for r in c] == records
    strategy = export.export_strategy_name(game, checkpoint, records)
    for named in (strategy, lambda: strategy):             # known first, or once written
        out = io.StringIO()
        export.write_json(out, chunks, game.name, 7, named)
        assert out.getvalue() == export.to_json(records, game.name, 7, strategy)
    out = io.StringIO()
    export.write_csv(out, chunks)
    assert out.getvalue() == export.to_csv(records)


@pytest.mark.parametrize("record", [
    {"player": 0, "street": "flop", "history": "ffr2.5ffc/", "bucket": 3, "hand": "AKs AQs",
     "actions": ["f", "c", "r0.5p"], "strategy": [0.1, 0.2, 0.7000000000000001],
     "visited": True},
    {"player": 1, "private": "J", "public": None, "history": "", "actions": [],
     "strategy": [5e-324, 1e300, 1.0], "visited": False},
    {}, {"x": float("nan"), "y": [float("-inf")]}, {"x": {"y": [1, (2, 3)]}, "z": "\u00e9\n\""},
    {1: 2}])
def test_a_json_record_is_what_json_dumps_writes(record):
    """The direct writer of flat records, and json.dumps for anything else."""
    text = json.dumps({"infosets": [record, record]}, indent=1)
    assert export.to_json([record, record], "g", 1, "s").endswith(text[1:] + "\n")


def _chunks_then(records, fail_after, seen=None):
    """A stand-in for iter_export_records: ``records`` in chunks of 50, raising OSError once
    ``fail_after`` chunks are out (None: never); ``seen`` collects the size of the file being
    written as each chunk is asked for."""

    def fake(game, store, checkpoint, streets=None, progress=None):
        for n, lo in enumerate(range(0, len(records), 50)):
            if fail_after is not None and n == fail_after:
                raise OSError(28, "No space left on device")
            if seen is not None:
                seen.append(sum(p.stat().st_size for p in seen[0].iterdir()
                                if p.name.endswith(".tmp")))
            yield records[lo:lo + 50]

    return fake


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_file_is_written_while_the_records_are_made(leduc_run, tmp_path, monkeypatch,
                                                        fmt):
    game, store, checkpoint = load_checkpoint_store(leduc_run)
    records = export.export_records(game, store, checkpoint)
    seen = [tmp_path]
    monkeypatch.setattr(export, "iter_export_records", _chunks_then(records, None, seen))
    out = tmp_path / f"leduc.{fmt}"
    assert main(["--checkpoint", str(leduc_run), "--out", str(out)]) == 0
    sizes = seen[1:]
    assert len(sizes) == 6 and sizes[0] == 0
    assert sizes[-1] > 0 and sizes == sorted(sizes)        # earlier chunks already in the file
    assert out.read_text() == _text_before_streaming(leduc_run, fmt)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_an_export_failing_midway_leaves_the_old_file(leduc_run, tmp_path, monkeypatch, fmt):
    game, store, checkpoint = load_checkpoint_store(leduc_run)
    records = export.export_records(game, store, checkpoint)
    monkeypatch.setattr(export, "iter_export_records", _chunks_then(records, 3))
    out = tmp_path / f"leduc.{fmt}"
    out.write_text("the previous export\n")
    with pytest.raises(OSError, match=f"^cannot write {re.escape(str(out))}: .*No space left"):
        main(["--checkpoint", str(leduc_run), "--out", str(out)])
    assert out.read_text() == "the previous export\n"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("run,args,message", [
    ("leduc_run", ["--street", "flop"],
     "--street flop: no infoset of this checkpoint is on it; its streets are 0, 1"),
    ("leduc_run", ["--player", "3"],
     "--player 3: no infoset of this checkpoint belongs to it; its players are 0, 1"),
    ("three_way_run", ["--street", "flop", "--player", "4"],
     "--player 4: no infoset of this checkpoint belongs to it; its players are 0, 1, 2"),
    ("three_way_run", ["--street", "0"], "--street 0: the 3-player game's streets are")])
def test_filters_that_select_nothing_raise_and_write_nothing(request, tmp_path, fmt, run, args,
                                                             message):
    logdir = request.getfixturevalue(run)
    out = tmp_path / f"nothing.{fmt}"
    with pytest.raises(ConfigError) as raised:
        main(["--checkpoint", str(logdir), "--out", str(out), *args])
    assert str(raised.value).startswith(message)
    assert list(tmp_path.iterdir()) == []
    out.write_text("the previous export\n")
    with pytest.raises(ConfigError):
        main(["--checkpoint", str(logdir), "--out", str(out), *args])
    assert out.read_text() == "the previous export\n"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


def test_filter_records_keeps_its_errors():
    records = [{"player": 0, "street": "preflop", "history": ""},
               {"player": 1, "street": "flop", "history": "c/"}]
    assert export.filter_records(records, ["flop"]) == records[1:]
    assert export.filter_records([], ["river"], [3]) == []
    with pytest.raises(ConfigError, match="^--street river flop --player 0 3: no infoset of "
                                          "this checkpoint is on those streets and belongs"):
        export.filter_records(records, ["river", "flop"], [0, 3])
    with pytest.raises(ConfigError, match="its streets are preflop, flop$"):
        export.filter_records(records, ["river"])
