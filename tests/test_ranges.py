"""Ranges at any node of a heads-up blueprint (``Blueprint.range``): reach and weights per combo
and per class, checked against sampled hands, card removal and the one-hand view (``spot``)."""

import numpy as np
import pytest

import holdem
from holdem.cards import parse

FLOP_LINE, FLOP = "r2.5b c", "Ah Kd 7c"
RIVER_LINE, RIVER = "r2.5b c c c c c", "Ah Kd 7c 2s 9h"


@pytest.fixture(scope="module")
def bp(hunl_run):
    return holdem.Blueprint.load(hunl_run)


def test_weights_sum_to_the_probability_of_the_line_found_by_sampling_hands(bp):
    """Deal both hands from the unseen cards, let each player act from the blueprint along the
    line: the share of deals that follow it is the sum of either player's weights."""
    rng = np.random.default_rng(7)
    board = parse(FLOP)
    unseen = np.array([c for c in range(52) if c not in board])
    labels = bp.line_labels(FLOP_LINE)
    hits, deals = 0, 6000
    for _ in range(deals):
        cards = rng.choice(unseen, 4, replace=False)
        holes = (cards[:2].tolist(), cards[2:].tolist())
        followed = True
        for k, label in enumerate(labels):
            spot = bp.spot(labels[:k], holes[k % 2], ())       # both actions are preflop
            mix = dict(zip(spot.labels, spot.strategy))
            if rng.random() >= mix[label]:
                followed = False
                break
        hits += followed
    r = bp.range(FLOP_LINE, FLOP)
    assert r.weight[0].sum() == pytest.approx(r.weight[1].sum(), rel=1e-12)
    p = r.line_probability
    se = np.sqrt(p * (1 - p) / deals)
    assert abs(hits / deals - p) < 4 * se, (hits / deals, p, se)


def test_card_removal_and_reach(bp):
    r = bp.range(FLOP_LINE, FLOP)
    board = set(parse(FLOP))
    assert r.combos.shape == (49 * 48 // 2, 2)
    assert not any(set(c) & board for c in r.combos.tolist())         # no live combo blocked
    by_class = r.by_class(0)
    # AA: 3 of its 6 combos use the board's ace; AhAx combos are not in the range at all.
    aa = [i for i, name in enumerate(r.combo_names()) if name[0] == "A" and name[2] == "A"]
    assert len(aa) == 3
    assert np.isclose(by_class["weight"][0, 0], r.weight[0, aa].sum())
    assert ((0 <= r.reach) & (r.reach <= 1)).all() and (r.weight >= 0).all()
    # Preflop the small blind's reach is its raise probability; the big blind's its call.
    pre = bp.range("", ())
    raise_first = pre.mix[:, pre.actions.index("r2.5b")]
    cells = r.class_cells()
    first = {tuple(c): i for i, c in enumerate(pre.combos.tolist())}
    for i in range(0, r.combos.shape[0], 97):
        j = first[tuple(r.combos[i])]
        assert r.reach[0, i] == pytest.approx(raise_first[j], rel=1e-12)
    assert cells.shape == (r.combos.shape[0], 2)


def test_a_combo_on_the_board_has_no_weight_at_all(bp):
    """A combo that uses a board card is in neither range, not even with weight 0."""
    r = bp.range(RIVER_LINE, RIVER)
    names = set(r.combo_names())
    assert "AhKs" not in names and "AsKs" in names
    weights = r.range_weights(1, combos=True)
    ah = parse("Ah")[0]
    assert all(ah not in pair for pair in weights)


def test_the_mix_and_bucket_of_each_combo_are_what_spot_says(bp):
    r = bp.range(RIVER_LINE, RIVER)
    rng = np.random.default_rng(3)
    for i in rng.choice(r.combos.shape[0], 25, replace=False):
        low, high = r.combos[i].tolist()
        spot = bp.spot(RIVER_LINE, [high, low], RIVER)
        assert spot.bucket == r.buckets[i]
        np.testing.assert_allclose(spot.strategy, r.mix[i], rtol=1e-12)
    assert r.player == 1 and r.street == 3            # the big blind acts first after the flop


def test_bad_input_says_what_is_wrong(bp):
    with pytest.raises(ValueError, match="needs 3 cards"):
        bp.range(FLOP_LINE, "Ah Kd")
    with pytest.raises(ValueError, match="not an action here"):
        bp.range("r9b", ())
    with pytest.raises(ValueError, match="twice"):
        bp.range(FLOP_LINE, "Ah Ah 7c")


def test_range_strings_of_a_node_read_back_to_its_weights(bp):
    from holdem.analysis.ranges.strings import format_range, parse_range

    r = bp.range(FLOP_LINE, FLOP)
    for player in (0, 1):
        per_class = r.range_weights(player)
        back = parse_range(format_range(per_class), combos=False)
        written = {k: round(v, 4) for k, v in per_class.items() if round(v, 4) > 0}
        assert back == pytest.approx(written, abs=1e-12)
        per_combo = r.range_weights(player, combos=True)
        back = parse_range(format_range(per_combo, combos=True), combos=True)
        assert back == pytest.approx({k: round(v, 4) for k, v in per_combo.items()
                                      if round(v, 4) > 0}, abs=1e-12)
        assert not set(back) & {c for c in back if set(c) & set(parse(FLOP))}


def test_inspect_range_prints_grids_strings_and_a_combo_table(hunl_run, tmp_path):
    import csv
    import subprocess
    import sys

    out = tmp_path / "flop.csv"
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.inspect_blueprint", "--checkpoint",
                           str(hunl_run), "--range", f"{FLOP_LINE} | {FLOP}", "--out",
                           str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    r = holdem.Blueprint.load(hunl_run).range(FLOP_LINE, FLOP)
    assert f"line probability on this board: {r.line_probability:.6g}" in text
    assert text.count("reach % per class") == 2 and "range string, player 1: " in text
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == r.combos.shape[0] == 1176
    assert sum(float(row["weight_p0"]) for row in rows) == pytest.approx(r.line_probability,
                                                                         rel=1e-6)
    bad = subprocess.run([sys.executable, "-m", "holdem.cli.inspect_blueprint", "--checkpoint",
                          str(hunl_run), "--range", f"{FLOP_LINE} | Ah Kd"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "needs 3 cards" in bad.stderr and "Traceback" not in bad.stderr
