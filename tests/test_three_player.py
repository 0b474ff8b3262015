"""Three-player Kuhn and Leduc (``configs/kuhn3.yaml``, ``configs/leduc3.yaml``): OpenSpiel's
rules in the betting tree, the config key that selects them, training in-process and on worker
processes to a small exact NashConv, and the commands that read the runs back.

The exact evaluator itself is checked against the reference best response and the uniform
profile's known NashConv in tests/test_exact.py.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from holdem import config
from holdem.games.small import KUHN, build_limit_tree
from holdem.games.tree import NodeKind, history_letters

ROOT = Path(__file__).resolve().parents[1]


def run(module, *args, check=True):
    proc = subprocess.run([sys.executable, "-m", f"holdem.cli.{module}", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"{module} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def decisions(game):
    """{history letters: (player, action letters)} of every decision node."""
    tree = game.tree
    out = {}
    for node in range(tree.kind.shape[0]):
        if tree.kind[node] == NodeKind.DECISION:
            c0 = int(tree.child_start[node])
            out[history_letters(tree, node)] = (
                int(tree.player[node]),
                "".join("fcr"[int(tree.action[c0 + a])] for a in range(tree.num_actions[node])))
    return out


def test_kuhn3_has_openspiels_twelve_histories(three_players):
    kuhn3, _ = three_players("kuhn")
    # After the first bet every other player calls or folds once (OpenSpiel: the hand ends
    # after num_players + first_bettor actions); 12 histories x 4 cards = 48 infosets.
    assert decisions(kuhn3) == {
        "": (0, "cr"), "c": (1, "cr"), "r": (1, "fc"), "cc": (2, "cr"), "cr": (2, "fc"),
        "rf": (2, "fc"), "rc": (2, "fc"), "ccr": (0, "fc"), "crf": (0, "fc"),
        "crc": (0, "fc"), "ccrf": (1, "fc"), "ccrc": (1, "fc")}
    assert kuhn3.bucket_stride == 4 and kuhn3.num_players == 3
    assert tuple(kuhn3.rules.deck_ranks) == (0, 1, 2, 3)


def test_leduc3_rounds_close_as_openspiel_says(three_players):
    leduc3, _ = three_players("leduc")
    table = decisions(leduc3)
    assert tuple(leduc3.rules.deck_ranks) == (0, 0, 1, 1, 2, 2, 3, 3)
    assert table["rr"] == (2, "fc")                  # two bets a round, the opening one included
    assert table["rc"] == (2, "fcr")
    assert table["rcf/"][0] == 0                      # called by one, folded by the other
    assert table["crcf/"] == (1, "cr")                # player 0 folded: player 1 opens round 2
    assert "ccc/" in table and "cc" in table and "ccc" not in table
    tree = leduc3.tree
    fold = tree.kind == NodeKind.FOLD
    assert set(tree.folded[fold].tolist()) <= {0b011, 0b101, 0b110}    # one player left
    showdown = tree.kind == NodeKind.SHOWDOWN
    assert all(bin(int(m)).count("1") <= 1 for m in tree.folded[showdown])


def test_two_player_trees_are_unchanged_by_the_player_count():
    assert KUHN.with_players(2) is KUHN
    tree = build_limit_tree(KUHN)
    assert tree.kind.shape[0] == 9 and tree.contrib.shape[1] == 2


def test_num_players_selects_the_game_and_is_checked(tmp_path):
    kuhn3 = config.load(ROOT / "configs" / "kuhn3.yaml")
    assert kuhn3.game.num_players == 3
    assert config.to_dict(kuhn3)["game"] == {"name": "kuhn", "num_players": 3}
    # Two-player headers stay as they were (tools/checkpoint_digest.py).
    assert config.to_dict(config.default_for_game("kuhn"))["game"] == {"name": "kuhn"}
    path = tmp_path / "k4.yaml"
    path.write_text("game: {name: leduc, num_players: 4}\n")
    with pytest.raises(config.ConfigError,
                       match=f"^{path}: game.num_players: leduc is for 2..3 players, got 4$"):
        config.load(path)


def test_kuhn3_trains_in_process_below_a_hundredth(tmp_path):
    proc = run("train_blueprint", "--config", ROOT / "configs" / "kuhn3.yaml", "--iters",
               2_000_000, "--logdir", tmp_path, "--quiet")
    assert "infosets=48 " in proc.stdout
    ev = run("eval_blueprint", "--checkpoint", tmp_path, "--exploitability", "--value")
    exploitability = float(re.search(r"^exploitability: (\S+)$", ev.stdout, re.M)[1])
    nash_conv = float(re.search(r"^nash_conv: (\S+)$", ev.stdout, re.M)[1])
    assert nash_conv < 0.01                              # measured 0.0022
    assert exploitability == pytest.approx(nash_conv / 3, rel=1e-6)
    values = [float(v) for v in re.findall(r"player\d=(\S+)", ev.stdout)]
    assert len(values) == 3 and abs(sum(values)) < 1e-9
    out = tmp_path / "kuhn3.json"
    run("export_strategy", "--checkpoint", tmp_path, "--out", out)
    data = json.loads(out.read_text())
    assert data["game"] == "kuhn" and len(data["infosets"]) == 48
    by = {(r["player"], r["private"], r["history"]): r for r in data["infosets"]}
    assert by[(2, "A", "cr")]["actions"] == ["f", "c"]
    assert by[(2, "A", "cr")]["strategy"][1] > 0.99       # the ace always calls
    assert {r["player"] for r in data["infosets"]} == {0, 1, 2}
    lbr = run("eval_blueprint", "--checkpoint", tmp_path, "--lbr", check=False)
    assert lbr.returncode == 2 and "3 players" in lbr.stderr


@pytest.mark.parallel
@pytest.mark.parametrize("name,iters,bound", [("kuhn3", 1_000_000, 0.1),     # measured 0.022-0.035
                                              ("leduc3", 1_000_000, 0.3)])    # measured 0.16
def test_three_players_train_on_two_workers(tmp_path, name, iters, bound):
    proc = run("train_blueprint", "--config", ROOT / "configs" / f"{name}.yaml", "--iters",
               iters, "--num-workers", 2, "--logdir", tmp_path, "--quiet")
    assert f"iterations={iters} " in proc.stdout
    ev = run("eval_blueprint", "--checkpoint", tmp_path, "--exploitability")
    assert float(re.search(r"^nash_conv: (\S+)$", ev.stdout, re.M)[1]) < bound
