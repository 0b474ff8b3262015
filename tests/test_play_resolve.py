"""A game against the re-solving bot shows what it waits for (issue 54: ``play --resolve turn``
sat silent for 100-150 s a turn): each solve says that it starts and on what tree, reports its
iterations, exploitability and at most how long is left, and ends at ``--resolve-time-limit``."""

import re

import holdem
from holdem.cli.play import PlaySession


def _play(bp, lines, **session):
    out, feed = [], iter(lines)

    def read(prompt):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None
    PlaySession(bp, seed=7, stack=10_000, big_blind=100, read=read, write=out.append,
                **session).play(1)
    return out


def test_a_turn_solve_shows_its_progress_and_stops_at_the_time_limit(untrained):
    """You check or call to the river: the bot solves the turn (a large tree: the time limit
    ends it) and the river, each announced, reported at every check (``progress_interval`` 0)
    with the time it may still take, and closed with why it stopped."""
    out = _play(holdem.Blueprint.load(untrained), ["c"] * 20, resolve="turn", time_limit=3.0,
                progress_interval=0)
    text = "\n".join(out)
    start = [i for i, line in enumerate(out) if line.startswith("  (bot: solving the ")]
    assert [out[i][len("  (bot: solving the "):][:5] for i in start] == ["turn,", "river"], text
    assert re.fullmatch(r"  \(bot: solving the turn, a [\d,]+-node tree: until 0\.5% of the "
                        r"pot, 300 iterations or 3 s\)", out[start[0]])
    turn = out[start[0] + 1:start[1]]
    done = [line for line in turn if line.startswith("  (bot: solved in ")]
    assert len(done) == 1, text
    m = re.fullmatch(r"  \(bot: solved in ([\d.]+) s, ([\d,]+) iterations, exploitability "
                     r"\S+% of the pot: time limit\)", done[0])
    assert m and float(m[1]) >= 3.0, done
    reports = [line for line in turn if line.startswith("  (bot: iteration ")]
    assert len(reports) == int(m[2].replace(",", "")) // 10 - 1       # every check but the last
    for line in reports:
        assert re.fullmatch(r"  \(bot: iteration [\d,]+, exploitability \S+% of the pot, \d+ "
                            r"s; at most ~\d+ s more\)", line), line
    assert "Result: you " in text


def test_the_time_limit_needs_re_solving(untrained, capsys):
    from holdem.cli.common import run_main
    from holdem.cli.play import main

    assert run_main(main, ["--checkpoint", str(untrained), "--resolve-time-limit", "5"]) == 2
    assert "--resolve-time-limit needs --resolve turn or river" in capsys.readouterr().err
