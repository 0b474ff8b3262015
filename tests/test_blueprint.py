"""The read-only Blueprint API over checkpoints."""

import re
from pathlib import Path

import numpy as np
import pytest

import holdem
from holdem import config as config_mod
from holdem.analysis.strategy import average_profile
from holdem.games import make_game
from holdem.solver.solver import Solver
from holdem.solver.solver import save_solver

ROOT = Path(__file__).resolve().parents[1]


def test_small_game_strategies_match_the_dense_profile(tmp_path):
    cfg = config_mod.default_for_game("leduc")
    game = make_game(cfg)
    solver = Solver(game, cfg)
    solver.run(20_000)
    path = save_solver(solver, tmp_path / "checkpoints" / "ckpt-000000020000.ckpt")
    bp = holdem.Blueprint.load(tmp_path)
    assert bp.metadata["iterations"] == 20_000 and bp.metadata["infosets"] == 288
    assert bp.checkpoint.path == path
    profile, _ = average_profile(game, solver.store.used())
    for key, na in zip(*solver.store.used()[:2]):
        np.testing.assert_allclose(bp.strategy(int(key), int(na)), profile[key, :na])
    assert np.allclose(bp.strategy(10**9, 3), 1 / 3)                      # never visited


def test_checkpoint_finds_its_bucket_file_by_sha256_when_the_path_changed(tmp_path):
    """A new default shipped at the path a checkpoint names: analysis uses the file beside it
    that has the recorded sha256, and without one the error names both files."""
    import dataclasses
    import shutil

    from holdem.abstraction.bucket_file import encode_buckets, load_buckets
    from holdem.checkpoint import CheckpointError

    default = ROOT / "assets" / "abstraction" / "default_hu.buckets"
    path = tmp_path / "assets" / "hu.buckets"
    path.parent.mkdir()
    shutil.copyfile(default, path)
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    cfg = dataclasses.replace(cfg, game=dataclasses.replace(cfg.game, buckets=str(path)))
    game = make_game(cfg)
    solver = Solver(game, cfg)
    solver.run(500)
    save_solver(solver, tmp_path / "run" / "checkpoints" / "ckpt-000000000500.ckpt")
    loaded = load_buckets(path)
    header = {k: v for k, v in loaded.header.items() if k != "arrays"}
    header["features"] = {**header["features"], "flop": "a new default"}
    shutil.move(path, tmp_path / "assets" / "old.buckets")
    path.write_bytes(encode_buckets(header, loaded.arrays))
    bp = holdem.Blueprint.load(tmp_path / "run")
    assert bp.game.buckets_sha256 == game.buckets_sha256
    assert bp.game.buckets_path == str(tmp_path / "assets" / "old.buckets")
    (tmp_path / "assets" / "old.buckets").unlink()
    with pytest.raises(CheckpointError, match=r"abstraction\.buckets_sha256: .*hu\.buckets"):
        holdem.Blueprint.load(tmp_path / "run")


def test_nlhe_query_by_line_and_cards(tmp_path):
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    game = make_game(cfg)
    solver = Solver(game, cfg)
    solver.run(3_000)
    save_solver(solver, tmp_path / "checkpoints" / "ckpt-000000003000.ckpt")
    bp = holdem.Blueprint.load(tmp_path)
    assert bp.metadata["buckets_sha256"] == game.buckets_sha256
    root = bp.query([], hole=[48, 49])                                       # AcAd? any two
    assert list(root) == ["f", "c", "r2.5b", "a"] and sum(root.values()) == pytest.approx(1)
    flop = bp.query(["c", "c"], hole=[0, 5], board=[10, 20, 30])
    assert list(flop)[0] == "c" and sum(flop.values()) == pytest.approx(1)
    with pytest.raises(ValueError, match="not an action here"):
        bp.query(["r7b"], hole=[0, 5])
    with pytest.raises(ValueError, match="board needs 3 cards, got 0"):
        bp.query(["c", "c"], hole=[0, 5])
    # Cards as text; errors name them as text, never as the padded numbers of the lookup.
    line = ["r2.5b", "c"]
    assert bp.query(line, "As Kd", "2c 7h 9d") == bp.query(line, [51, 45], [0, 22, 29])
    assert bp.query(line, ["As", "Kd"], "2c7h9d") == bp.query(line, [51, 45], [0, 22, 29])
    for hole, board, message in [
            ("As Kd", "As 7h 9d", "As is dealt twice: hole As Kd, board As 7h 9d"),
            ([51, 45], [51, 22, 29], "As is dealt twice: hole As Kd, board As 7h 9d"),
            ("Kd Kd", "2c 7h 9d", "Kd is dealt twice: hole Kd Kd, board 2c 7h 9d"),
            ("As", "2c 7h 9d", "hole needs 2 cards, got As"),
            ("As Kx", "2c 7h 9d", "hole: bad card 'Kx'"),
            ([51, 60], "2c 7h 9d", "hole: card 60 is outside 0..51"),
            ("As Kd", "2c 7h 9d 3s", r"flop decision: the board needs 3 cards, got 4 \(2c 7h")]:
        with pytest.raises(ValueError, match=message) as info:
            bp.query(line, hole, board)
        assert not re.search(r"\b(1[0-9]|[2-4][0-9])\b", str(info.value))   # no card numbers
    with pytest.raises(ValueError, match="preflop decision: the board needs 0 cards, got 3"):
        bp.query([], "As Kd", "2c 7h 9d")


def test_one_line_notation_for_query_spot_charts_and_exports(small_nlhe_blueprint, hunl_run,
                                                          tmp_path):
    import subprocess
    import sys

    from holdem.analysis.blueprint import load_checkpoint_store
    from holdem.analysis.ranges.charts import range_chart
    from holdem.analysis.export.records import nlhe_records

    bp = small_nlhe_blueprint
    as_list = bp.query(["r2.5b", "c"], "As Kd", "2c 7h 9d")
    # The string the CLI takes is split into labels, not into characters.
    assert bp.query("r2.5b c", "As Kd", "2c 7h 9d") == as_list
    # An exported history names the same node: every exported history reads back to it.
    game, store, _ = load_checkpoint_store(hunl_run)
    records = nlhe_records(game, store)
    checked = 0
    for record in records[::max(1, len(records) // 300)]:
        labels = bp.line_labels(record["history"])
        assert record["actions"] == list(bp.action_meanings(labels))
        assert bp.node_of(labels) == bp.node_of(bp.line_labels(" ".join(labels)))
        checked += 1
    assert checked > 100
    assert bp.line_labels("r2.5c/") == ["r2.5b", "c"]
    assert bp.query("r2.5c/", "As Kd", "2c 7h 9d") == as_list
    with pytest.raises(ValueError, match=r"no raise to 3 big blinds after the start \(raises "
                                         r"here: r2.5, r100\)"):
        bp.line_labels("r3c")
    spot = bp.spot("r2.5b c", [51, 45], [0, 22, 29])
    assert (spot.hole, spot.board, spot.line) == (("As", "Kd"), ("2c", "7h", "9d"),
                                                  ("r2.5b", "c"))
    # No board is None as well as ().
    assert bp.query("", "As Kd", None) == bp.query([], "As Kd")
    assert range_chart(bp, "r2.5").line == range_chart(bp, ["r2.5b"]).line == ("r2.5b",)
    # The CLI takes an export history in --spot.
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.inspect_blueprint", "--checkpoint",
                           str(hunl_run), "--spot", "r2.5c/ | As Kd | 2c 7h 9d"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    proc2 = subprocess.run([sys.executable, "-m", "holdem.cli.inspect_blueprint", "--checkpoint",
                            str(hunl_run), "--spot", "r2.5b c | As Kd | 2c 7h 9d"],
                           capture_output=True, text=True, timeout=600)
    assert proc.stdout == proc2.stdout


def test_inspect_blueprint_cli(tmp_path):
    import subprocess
    import sys

    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    solver = Solver(make_game(cfg), cfg)
    solver.run(2_000)
    save_solver(solver, tmp_path / "checkpoints" / "ckpt-000000002000.ckpt")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "holdem.cli.inspect_blueprint",
                               "--checkpoint", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=300)
    summary = run()
    assert summary.returncode == 0, summary.stderr
    assert "iterations: 2000" in summary.stdout and "game: nlhe" in summary.stdout
    flop = run("--spot", "r2.5b c | As Kd | 2c 7h 9d")
    assert flop.returncode == 0, flop.stderr
    lines = flop.stdout.splitlines()
    assert lines[0] == "to act: player 1, the big blind; flop; pot 5 bb, nothing to call"
    bucket = holdem.Blueprint.load(tmp_path).spot(["r2.5b", "c"], "As Kd", "2c 7h 9d").bucket
    assert lines[1] == f"cards: As Kd, board 2c 7h 9d -> flop bucket {bucket} of 50"
    rows = [line.split() for line in lines[3:]]
    assert [r[0] for r in rows] == ["c", "r0.5p", "r1p", "a"]
    assert [" ".join(r[1:-1]) for r in rows] == ["check", "bet 2.5 bb", "bet 5 bb",
                                                  "all-in: bet 97.5 bb"]
    assert abs(sum(float(r[-1]) for r in rows) - 1) < 1e-3
    preflop = run("--spot", "r2.5b | Ah Ks |")
    assert preflop.returncode == 0, preflop.stderr
    lines = preflop.stdout.splitlines()
    assert lines[0] == "to act: player 1, the big blind; preflop; pot 3.5 bb, 1.5 bb to call"
    assert re.fullmatch(r"cards: Ah Ks -> preflop bucket \d+ of 169 = hand class AKo", lines[1])
    assert [" ".join(line.split()[1:-1]) for line in lines[3:]] == [
        "fold", "call 1.5 bb", "raise to 7.5 bb", "all-in: raise to 100 bb"]
    for spot, message in [("r9b | As Kd", "not an action here"),
                          ("c c | As Kd | 2c 7h 9d 3s", "the board needs 3 cards, got 4"),
                          ("c c | As Kd", "the board needs 3 cards, got 0"),
                          ("| As Kd | 2c 7h 9d", "preflop decision: the board needs 0 cards"),
                          ("c c | As Kd | As 7h 9d", "As is dealt twice: hole As Kd, board As")]:
        bad = run("--spot", spot)
        assert bad.returncode == 2 and message in bad.stderr, (spot, bad.stderr)
        errors = [line for line in bad.stderr.splitlines() if ": loading " not in line]
        assert "Traceback" not in bad.stderr and len(errors) == 1, bad.stderr


def test_translate_real_sizes_to_the_tree(tmp_path):
    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    solver = Solver(make_game(cfg), cfg)
    solver.run(100)
    save_solver(solver, tmp_path / "checkpoints" / "ckpt-000000000100.ckpt")
    bp = holdem.Blueprint.load(tmp_path)
    # real game with a 2-chip big blind: open to 5 chips (= 2.5 bb, on the tree), call
    labels, notes = bp.translate_line([("raise", 5), ("call", 0)], big_blind=2)
    assert labels == ["r2.5b", "c"] and notes[0][1] == "r2.5b"
    # flop: BB checks, SB bets 0.6 pot (between the tree's 0.5 and 1.0 pot): half pot is closer
    labels, notes = bp.translate_line([("raise", 5), ("call", 0), ("check", 0), ("bet", 6)],
                                      big_blind=2)
    assert labels[-1] == "r0.5p" and 0.5 < notes[-1][2] <= 1.0
    labels, notes = bp.translate_line([("allin", 200)], big_blind=2)
    assert labels == ["a"] and notes[0].options == (("a", 49.5, 1.0),) and notes[0].is_exact


def test_off_tree_sizes_are_read_at_random_with_pseudo_harmonic_odds(small_nlhe_blueprint):
    """A 7 bb open (3 x pot; the tree opens 2.5 bb = 0.75 x pot, or all-in = 49.5 x pot) is
    read as r2.5b with probability f(3) of Ganzfried & Sandholm (2013), eq. 3, else as all-in;
    never always as all-in, which a player could exploit."""
    from holdem.abstraction.actions import pseudo_harmonic

    bp = small_nlhe_blueprint
    line = [("raise", 14), ("call", 0)]                         # big blind 2 chips: 7 bb
    p_small = pseudo_harmonic(3.0, 0.75, 49.5)
    assert p_small == pytest.approx((49.5 - 3) * 1.75 / (48.75 * 4))
    labels, notes = bp.translate_line(line, big_blind=2)        # no rng: the likelier reading
    assert labels[0] == "a" and notes[0].fraction == pytest.approx(3.0)
    assert notes[0].options == (("r2.5b", 0.75, pytest.approx(p_small)),
                                ("a", 49.5, pytest.approx(1 - p_small)))
    assert not notes[0].is_exact
    rng = np.random.default_rng(5)
    reads = [bp.translate_line(line[:1], 2, rng=rng)[0][0] for _ in range(4_000)]
    share = reads.count("r2.5b") / len(reads)                  # 0.417; sd 0.008
    assert abs(share - p_small) < 0.03
    # One seed reads a line and its continuations alike, so a bot keeps its reading: a flop
    # bet of 0.6 x pot (r0.5p 75%, r1p 25%), then a raise to 15 bb.
    flop = [("raise", 5), ("call", 0), ("check", 0), ("bet", 6)]
    first = set()
    for seed in range(40):
        short, _ = bp.translate_line(flop, 2, rng=np.random.default_rng(seed))
        longer, notes = bp.translate_line(flop + [("raise", 30)], 2,
                                          rng=np.random.default_rng(seed))
        assert longer[:4] == short and notes[1].label == short[-1] and len(notes) == 3
        first.add(short[-1])
    assert first == {"r0.5p", "r1p"}


@pytest.fixture(scope="module")
def small_nlhe_blueprint(hunl_run):
    return holdem.Blueprint.load(hunl_run)


def test_k_checks_in_a_line_as_in_play(small_nlhe_blueprint, hunl_run):
    """Issue 40: ``k`` means check in ``play`` but was "not an action here" in ``--spot``
    lines. It is the label ``c`` where nothing is to call, and an error facing a bet."""
    import subprocess
    import sys

    bp = small_nlhe_blueprint
    assert bp.line_labels("r2.5b c k") == ["r2.5b", "c", "c"]
    assert bp.line_labels("c k") == ["c", "c"]             # the big blind checks its option
    assert bp.query("r2.5b c k", "As Kd", "2c 7h 9d") == bp.query(
        ["r2.5b", "c", "c"], "As Kd", "2c 7h 9d")
    with pytest.raises(ValueError, match=r"'k' \(check\) after r2.5b: there is a bet to call"):
        bp.line_labels("r2.5b k")
    with pytest.raises(ValueError, match=r"'k' \(check\) after the start: there is a bet"):
        bp.line_labels("k")

    def spot(text):
        return subprocess.run([sys.executable, "-m", "holdem.cli.inspect_blueprint",
                               "--checkpoint", str(hunl_run), "--spot", text],
                              capture_output=True, text=True, timeout=300)
    with_k, with_c = spot("r2.5b c k | As Kd | 2c 7h 9d"), spot("r2.5b c c | As Kd | "
                                                              "2c 7h 9d")
    assert with_k.returncode == 0, with_k.stderr
    assert with_k.stdout == with_c.stdout
    refused = spot("r2.5b k | As Kd |")
    assert refused.returncode == 2 and "there is a bet to call" in refused.stderr


def test_head_to_head_against_baselines_and_itself(small_nlhe_blueprint):
    from holdem.analysis.matches.headtohead import bot_tables, head_to_head

    bp = small_nlhe_blueprint
    tables = bot_tables(bp.game)
    # The root's fold, call, about-pot raise (to 2.5 bb of the menu; pot is to 3 bb) and all-in.
    assert [bp.game.rules.labels[c] for c in tables[:, 0]] == ["f", "c", "r2.5b", "a"]
    vs_fold = head_to_head(bp, "fold", hands=20_000, seed=1)
    assert vs_fold.hands == 20_000
    assert vs_fold.mbb_per_hand - vs_fold.ci95 > 0          # beats a player who always folds
    # Each deal is played in both seats: as the big blind the blueprint wins the bot's small
    # blind (+500 mbb: it folds at once); as the small blind between -1,000 (a lost check-down)
    # and +1,000 (the bot folds to any bet and never puts in more than its big blind).
    assert -250 <= vs_fold.raw_mbb_per_hand <= 750
    again = head_to_head(bp, "equity", hands=2_000, seed=3)
    assert again == head_to_head(bp, "equity", hands=2_000, seed=3)      # seeded
    with pytest.raises(ValueError, match="unknown baseline"):
        head_to_head(bp, "shove", hands=10)


@pytest.mark.parametrize("opponent", ["random", "call"])
def test_control_variate_is_unbiased_and_narrows_the_interval(small_nlhe_blueprint, opponent):
    """Per deal the control variate's correction has mean zero (the chosen action is drawn from
    the sigma it weights), and it takes out much of the luck of sampled actions: with the fitted
    coefficient the spread shrinks. Against the call bot, which never mixes, only A's own
    decisions are corrected."""
    from holdem.analysis.matches.headtohead import (blueprint_store, control_coefficient,
                                                    match_samples)

    bp = small_nlhe_blueprint
    store = blueprint_store(bp).arrays
    plain, correction = match_samples(bp.game, store, opponent, hands=40_000, seed=7)
    assert plain.shape == correction.shape == (20_000,)
    assert np.count_nonzero(correction) > 0.5 * correction.size
    standard_error = correction.std(ddof=1) / np.sqrt(correction.size)
    assert abs(correction.mean()) < 4 * standard_error, (correction.mean(), standard_error)
    c = control_coefficient(plain, correction)
    assert 0 < c <= 1.2
    assert (plain + c * correction).std() < 0.95 * plain.std()
    again = match_samples(bp.game, store, opponent, hands=40_000, seed=7)
    assert np.array_equal(again[0], plain) and np.array_equal(again[1], correction)   # seeded


def test_a_blueprint_against_itself_scores_exactly_zero_per_deal(small_nlhe_blueprint):
    """Common random numbers: both seatings of a deal draw each decision with the same number,
    so a blueprint against itself replays the same hand with the seats swapped."""
    from holdem.analysis.matches.headtohead import blueprint_store, head_to_head, match_samples

    bp = small_nlhe_blueprint
    store = blueprint_store(bp).arrays
    plain, correction = match_samples(bp.game, store, None, store, hands=4_000, seed=3)
    assert not plain.any() and abs(correction).max() < 1e-9
    assert np.count_nonzero(match_samples(bp.game, store, "random", hands=4_000, seed=3)[0])
    assert head_to_head(bp, bp, hands=4_000).mbb_per_hand == 0.0


def test_control_coefficient_minimises_the_variance():
    from holdem.analysis.matches.headtohead import control_coefficient

    rng = np.random.default_rng(0)
    noise = rng.normal(size=10_000)
    signal = rng.normal(size=10_000)
    assert control_coefficient(signal + 0.5 * noise, -noise) == pytest.approx(0.5, abs=0.03)
    assert control_coefficient(signal, np.zeros(10_000)) == 0.0
    assert control_coefficient(signal[:1], noise[:1]) == 0.0


def test_match_result_line_gives_both_estimates():
    from holdem.analysis.matches.headtohead import MatchResult

    heads_up = MatchResult(mbb_per_hand=12.34, ci95=5.0, hands=2000, raw_mbb_per_hand=20.0,
                           raw_ci95=9.87)
    assert heads_up.line() == ("mbb/hand: 12.3 ± 5.0 (95% CI, 2000 hands; without the control "
                               "variate 20.0 ± 9.9)")
    assert MatchResult(1.0, 2.0, 600).line() == "mbb/hand: 1.0 ± 2.0 (95% CI, 600 hands)"


def test_head_to_head_looks_up_each_blueprints_own_buckets(small_nlhe_blueprint):
    """Against a blueprint with a card abstraction of its own, B's buckets come from B's tables:
    relabel every bucket of B's tables by a permutation and its store's keys to match, and the
    match is the same, hand for hand, as with the original blueprint."""
    from types import SimpleNamespace

    from holdem.analysis.matches.headtohead import blueprint_store, head_to_head, play_match
    from holdem.store.store import RegretStore

    bp = small_nlhe_blueprint
    game, stride = bp.game, bp.game.bucket_stride
    tables = game.deal.tables
    rng = np.random.default_rng(0)
    perms = [rng.permutation(int(k)) for k in tables.num_buckets]
    relabelled = tables._replace(**{
        name: perms[street][getattr(tables, name)].astype(getattr(tables, name).dtype)
        for street, name in enumerate(("preflop_bucket", "flop_bucket", "turn_bucket",
                                       "river_bucket"))})
    store = blueprint_store(bp)
    arrays = bp.checkpoint.arrays
    keys = np.asarray(arrays["keys"], dtype=np.int64)
    nodes = np.flatnonzero(game.tree.kind == 0)
    street_of = dict(zip(game.tree.history[nodes].tolist(), game.tree.street[nodes].tolist()))
    history, bucket = keys // stride, keys % stride
    street = np.array([street_of[h] for h in history.tolist()])
    new_bucket = np.array([perms[s][b] for s, b in zip(street.tolist(), bucket.tolist())])
    other = RegretStore.from_arrays(history * stride + new_bucket, arrays["num_actions"],
                                    arrays["regrets"], arrays["strategy_sum"])
    cards_b = SimpleNamespace(deal=SimpleNamespace(tables=relabelled), bucket_stride=stride)
    want = play_match(game, store.arrays, None, store.arrays, hands=4_000, seed=5)
    got = play_match(game, store.arrays, None, other.arrays, hands=4_000, seed=5,
                     cards_b=cards_b)
    assert got == want
    wrong = play_match(game, store.arrays, None, other.arrays, hands=4_000, seed=5)
    assert wrong != want                        # B's keys do not fit A's buckets
    import dataclasses
    richer = SimpleNamespace(config=dataclasses.replace(
        bp.config, game=dataclasses.replace(bp.config.game, stack=bp.config.game.stack * 2)),
        game=game)
    with pytest.raises(ValueError, match="same game and action abstraction"):
        head_to_head(bp, richer, hands=10)


def test_eval_blueprint_cli_head_to_head(small_nlhe_blueprint):
    import re
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "holdem.cli.eval_blueprint", "--checkpoint",
                           str(small_nlhe_blueprint.checkpoint.path), "--vs", "call",
                           "--hands", "2000"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^vs call: mbb/hand: -?[\d.]+ ± [\d.]+ \(95% CI, 2000 hands; "
                     r"without the control variate -?[\d.]+ ± [\d.]+\)$",
                     proc.stdout, re.M), proc.stdout


def test_training_logs_a_baseline_match_to_tensorboard(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from holdem.training import train

    cfg = config_mod.load(ROOT / "configs" / "hunl_default.yaml")
    cfg = config_mod.with_overrides(cfg, train={"iters": 5_000, "tensorboard": True,
                                                "eval_baseline": "fold", "eval_hands": 2_000})
    train(cfg, tmp_path, progress=False)
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert "eval/mbb_vs_fold" in events.Tags()["scalars"]
    last = events.Scalars("eval/mbb_vs_fold")[-1]
    assert last.step == 5_000
    # The final evaluation is the match of the final checkpoint's strategy, seeded with the
    # iteration count: replayed from the checkpoint through the analysis API, it is the same.
    from holdem.analysis.matches.headtohead import head_to_head

    again = head_to_head(holdem.Blueprint.load(tmp_path), "fold", hands=2_000, seed=5_000)
    assert last.value == pytest.approx(again.mbb_per_hand, rel=1e-6)
    ci = events.Scalars("eval/mbb_vs_fold_ci95")[-1]
    assert ci.step == 5_000 and ci.value == pytest.approx(again.ci95, rel=1e-6)


def test_nlhe_export_round_trip_matches_blueprint(small_nlhe_blueprint, tmp_path):
    import subprocess
    import sys

    from holdem.analysis.export.records import read_export
    from holdem.games.nlhe.abstract import history_string
    from holdem.games.tree import NodeKind

    bp = small_nlhe_blueprint
    outs = {}
    for suffix in ("json", "csv"):
        out = tmp_path / f"x.{suffix}"
        proc = subprocess.run([sys.executable, "-m", "holdem.cli.export_strategy",
                               "--checkpoint", str(bp.checkpoint.path), "--out", str(out),
                               "--street", "preflop", "--street", "flop"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs[suffix] = read_export(out)
    assert len(outs["json"]) == len(outs["csv"]) > 0
    for a, b in zip(outs["json"], outs["csv"]):
        assert (a["history"], a["bucket"], a.get("hand"), a["actions"], a["strategy"]) == (
            b["history"], b["bucket"], b.get("hand"), b["actions"], b["strategy"])
    # Preflop records name the bucket's hand class; its cards fall in that bucket.
    from holdem.analysis.ranges.charts import combos

    preflop = [r for r in outs["json"] if r["street"] == "preflop"]
    assert preflop and all("hand" not in r for r in outs["json"] if r["street"] != "preflop")
    assert {r["hand"] for r in preflop if r["history"] == ""} >= {"AA", "AKs", "AKo", "72o"}
    for r in preflop[:300]:
        assert bp.spot([], combos(r["hand"])[-1]).bucket == r["bucket"]
    tree = bp.game.tree
    node_of = {history_string(bp.game.rules, int(n)): int(n)
               for n in np.flatnonzero(tree.kind == NodeKind.DECISION)}
    assert {r["street"] for r in outs["csv"]} == {"preflop", "flop"}
    for r in outs["csv"][:500]:
        node = node_of[r["history"]]
        key = int(tree.history[node]) * bp.game.bucket_stride + r["bucket"]
        assert r["strategy"] == bp.strategy(key, len(r["actions"])).tolist()
