"""OpenSpiel's external-sampling MCCFR for a budget of CPU seconds, and the NashConv of its
average policy: the reference the three-player Kuhn and Leduc figures are compared with
(docs/three-players.md).

    pip install open_spiel          # not a dependency of holdem; any environment will do
    python tools/openspiel_mccfr.py kuhn_poker --players 3 --seconds 10 --seed 0
    python tools/openspiel_mccfr.py leduc_poker --players 3 --seconds 60 --seed 0

Runs ``pyspiel.ExternalSamplingMCCFRSolver`` (C++, one core, simple averaging) in chunks of 100
iterations until ``--seconds`` of process CPU time have passed, then computes the NashConv of
its average policy with ``pyspiel.nash_conv`` (the policy is read into a tabular one first:
the solver's own policy object does not answer by information-state string for Leduc).
Prints one line: iterations, iterations per CPU second, NashConv, seconds the NashConv took.
"""

import argparse
import sys
import time


def build_parser():
    p = argparse.ArgumentParser(prog="python tools/openspiel_mccfr.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("game", choices=("kuhn_poker", "leduc_poker"))
    p.add_argument("--players", type=int, default=3, help="players (default 3)")
    p.add_argument("--seconds", type=float, default=10.0,
                   help="process CPU seconds of MCCFR iterations (default 10)")
    p.add_argument("--seed", type=int, default=0, help="the solver's seed (default 0)")
    return p


def tabular(game, policy):
    """``policy``'s strategy at every decision, as a ``pyspiel.TabularPolicy``."""
    import pyspiel

    table, stack = {}, [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        key = state.information_state_string()
        if key not in table:
            table[key] = list(policy.get_state_policy(state))
        stack.extend(state.child(a) for a in state.legal_actions())
    return pyspiel.TabularPolicy(table)


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        import pyspiel
    except ImportError:
        print("openspiel_mccfr: error: needs OpenSpiel (pip install open_spiel)", file=sys.stderr)
        return 2
    game = pyspiel.load_game(args.game, {"players": args.players})
    solver = pyspiel.ExternalSamplingMCCFRSolver(game, args.seed,
                                                 pyspiel.MCCFRAverageType.SIMPLE)
    start, iterations = time.process_time(), 0
    while time.process_time() - start < args.seconds:
        for _ in range(100):
            solver.run_iteration()
        iterations += 100
    cpu = time.process_time() - start
    begin = time.process_time()
    nash_conv = pyspiel.nash_conv(game, tabular(game, solver.average_policy()))
    print(f"{args.game} players={args.players} seed={args.seed}: {iterations} iterations in "
          f"{cpu:.1f} s CPU ({iterations / cpu:,.0f}/s); NashConv {nash_conv:.6g} (nash_conv "
          f"took {time.process_time() - begin:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
