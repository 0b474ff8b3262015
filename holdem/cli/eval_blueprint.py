"""Evaluate a trained strategy.

    python -m holdem.cli.eval_blueprint --checkpoint runs/leduc --exploitability

``--exploitability`` prints ``exploitability: X`` (NashConv / number of players of the normalized
average strategy, chips per game) and ``nash_conv: Y`` for Kuhn and Leduc (2 or 3 players),
computed by exact best response. For heads-up
No-Limit Hold'em ``--lbr`` prints a lower bound on it, local best response's winnings:
``lbr: X ± Y mbb/hand (95% CI, N hands)``, followed by a note suggesting a hand count when the
interval is too wide to be useful (:meth:`holdem.analysis.lbr.sampled.LbrResult.advice`). ``--lbr
fcpa:3-4 56:3-4`` plays the published settings (:class:`holdem.analysis.lbr.sampled.LbrSetting`),
one line each (``lbr fcpa:3-4: ...``). On Kuhn and Leduc ``--lbr`` prints LBR's exact value
(``lbr: X``, chips per game) next to the exploitability it bounds. The first run
announces the compilation of its kernels on stderr. With ``--history FILE`` the first
``--history-hands`` hands of each match (``--vs``, ``--vs-checkpoint``) go to FILE in the Poker
Hand History format (:mod:`holdem.analysis.matches.hand_history`); the match's numbers do not
change.

Imported when the command runs, not with this module: LBR, the cross-menu match (on LBR's hand
kernels) and the re-solving bot (about 0.15 s each), so that ``--help`` and the flag errors stay
quick.
"""

import sys

from holdem import checkpoint as ckpt
from holdem.analysis import evaluation
from holdem.analysis.blueprint import Blueprint
from holdem.analysis.matches.hand_history import check_replaceable, chips_comment, write
from holdem.analysis.matches.headtohead import blueprint_store, head_to_head_hands
from holdem.cli.common import ArgumentParser, checkpoint_file, output_file, run_main
from holdem.config import ConfigError
from holdem.games.checkpointed import game_of_checkpoint
from holdem.games.interface import EXACT, LINES
from holdem.metrics import compile_notice


HISTORY_HANDS = 100
"""Hands of each match written by ``--history`` without ``--history-hands``."""

COMPILE_SECONDS = {"load": 1, "vs": 17, "lbr": 50}
"""CPU seconds that compiling takes with a cold numba cache (2-core development machine):
reading a store back, the head-to-head kernel, the local best response kernel."""


def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.eval_blueprint",
                       description="Evaluate a checkpoint's average strategy.")
    p.add_checkpoint()
    p.add_argument("--exploitability", action="store_true",
                   help="exact exploitability (Kuhn, Leduc): NashConv / players, chips per "
                        "game, and the NashConv")
    p.add_argument("--value", action="store_true",
                   help="expected value of the average strategy for each player")
    p.add_argument("--vs", action="append", metavar="BOT",
                   choices=("fold", "call", "pot", "random", "equity"),
                   help="NLHE: play against a baseline bot (repeatable): fold, call, "
                        "pot, random, equity")
    p.add_argument("--vs-checkpoint", metavar="PATH", type=checkpoint_file,
                   help="NLHE: play against another checkpoint of the same game (heads-up "
                        "with another bet menu: on the real game, each blueprint through "
                        "its own translation)")
    p.add_argument("--lbr", nargs="*", metavar="SETTING",
                   help="local best response, a lower bound on the exploitability (heads-up "
                        "NLHE: mbb/hand; Kuhn, Leduc: exact, chips per game). Each SETTING is "
                        "ACTIONS[:ROUNDS]: ACTIONS abstract (the blueprint tree's sizes), fc "
                        "(fold, call), fcpa (fold, call, pot, all-in) or 56 (fold, call, "
                        "all-in, 55 pot fractions 0.05 x 1.15^k); ROUNDS 1-4 (default) or 3-4 "
                        "(turn and river only, checking or calling before), as Lisy & Bowling "
                        "2017 measured published bots. 'paper' = their four rows (fc:1-4 "
                        "fcpa:3-4 56:1-4 56:3-4), printed next to their figures for Hyperborean, "
                        "Slumbot, Act1 and Full Cards. Without a SETTING: abstract:1-4")
    p.add_argument("--lbr-bucket-samples", type=int, default=0, metavar="N",
                   help="--lbr: bucket-only LBR, which sees only its card bucket after the "
                        "flop (as the blueprint does) and decides with the mean equity of N "
                        "hands drawn from it; next to the exact LBR over one run's checkpoints "
                        "it shows whether the abstraction is what makes LBR rise (default 0: "
                        "exact LBR)")
    p.add_argument("--hands", type=int, default=None,
                   help="hands per match (and for --lbr), played as duplicate pairs "
                        "(default 100000, with --resolve 1000; --lbr says when too few give a "
                        "useful interval)")
    p.add_argument("--resolve", choices=("turn", "river"),
                   help="--vs-checkpoint, --lbr: the checkpoint plays as a re-solving bot, its "
                        "blueprint until this street and a subgame solved with exact cards "
                        "from there (docs/studying.md#re-solving-bot); prints its result and the "
                        "blueprint alone's on the same deals and draws, and their difference. "
                        "--lbr then takes the 3-4 settings (fc:3-4, fcpa:3-4, 56:3-4)")
    p.add_argument("--resolve-target", type=float, default=0.5, metavar="PCT",
                   help="--resolve: solve each subgame to this exploitability, %% of the pot "
                        "(default 0.5)")
    p.add_argument("--resolve-iterations", type=int, default=300, metavar="N",
                   help="--resolve: at most N iterations per solve (default 300)")
    p.add_argument("--resolve-per-board", type=int, default=1, metavar="N",
                   help="--resolve: deal the hands in groups of N deals that share a "
                        "board, so the bot reads a spot it met before in the group from a "
                        "cache instead of solving it again (a turn solve takes seconds); the "
                        "intervals are computed over the groups (default 1: independent deals)")
    p.add_argument("--resolve-processes", type=int, default=1, metavar="N",
                   help="--resolve: play the boards (the groups of deals that share one) on N "
                        "processes, each with its own solve cache and --threads threads; the "
                        "same result as one process, sooner (default 1)")
    p.add_argument("--resolve-cache-mb", type=float, metavar="MIB",
                   help="--resolve with --resolve-per-board above 1: each process keeps the "
                        "most recently used solutions up to MIB mebibytes, and always the "
                        "newest (a turn solution takes 27-95 MB, a river one 1-2; default "
                        "2048)")
    p.add_argument("--resolve-safe", action="store_true",
                   help="--resolve: safe re-solving, the re-solve gadget (the opponent may take "
                        "its blueprint value per hand instead of entering the subgame), on the "
                        "blueprint's own sizes (river re-solving only; default: unsafe)")
    p.add_argument("--seed", type=int, default=0, help="seed for deals and action sampling")
    p.add_argument("--threads", type=int, default=1,
                   help="--lbr, and --vs-checkpoint across bet menus: threads to play "
                        "the hands on (default 1)")
    p.add_argument("--history", metavar="FILE", type=output_file,
                   help="--vs, --vs-checkpoint: write the first hands of each match (every "
                        "player's cards, the board, actions, final stacks; chips of the "
                        "blueprint's game) to FILE in the Poker Hand History format, one table "
                        "per hand (.phhs); replaces FILE only if it is a hand history holdem "
                        "wrote")
    p.add_argument("--history-hands", type=int, metavar="N",
                   help=f"--history: how many hands of each match (default "
                        f"{HISTORY_HANDS} or the match's --hands if fewer; more than --hands "
                        "is refused)")
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.hands is None:
        args.hands = 1000 if args.resolve else 100_000
    args.paper = args.lbr is not None and "paper" in args.lbr
    args.lbr, lbr_error = _lbr_settings(args.lbr)
    for broken, message in _flag_rules(args, lbr_error):
        if broken:
            parser.error(message)
    if args.history:
        try:
            check_replaceable(args.history)
        except ValueError as exc:
            parser.error(f"--history: {exc}")

    path, game, config = _checkpoint_game(args.checkpoint)
    exact = game.supports(EXACT)                # LBR is exact there: no kernel to compile
    plays = bool(args.vs or args.vs_checkpoint)
    lbr = args.lbr is not None and not exact
    _check_game(args, path, game, exact, plays, lbr)
    seconds = (COMPILE_SECONDS["load"] + COMPILE_SECONDS["vs"] * plays
               + COMPILE_SECONDS["lbr"] * lbr)
    with compile_notice(seconds):
        if args.resolve:
            return _resolve(args, _blueprint(path, game, config))
        if plays or lbr:
            return _play(args, _blueprint(path, game, config))
        return _exact(args, path, game)


def _flag_rules(a, lbr_error):
    """Every rule between this command's flags, in the order they are checked: (broken,
    message) pairs; the first broken one is the error."""
    resolving = "applies to --resolve (--lbr or --vs-checkpoint)"
    return (
        (not (a.exploitability or a.value or a.vs or a.vs_checkpoint or a.lbr is not None),
         "choose what to evaluate: --exploitability, --value, --vs BOT, --vs-checkpoint PATH "
         "or --lbr"),
        (a.hands < 1, f"--hands must be positive, got {a.hands}"),
        (bool(a.resolve) and bool(a.vs or not (a.vs_checkpoint or a.lbr is not None)),
         "--resolve plays the re-solving bot against --vs-checkpoint PATH or --lbr (not "
         "against --vs bots)"),
        (bool(a.resolve and a.history), "--history is not written for --resolve matches"),
        (a.resolve_safe and a.resolve != "river",
         "--resolve-safe needs --resolve river (the gadget's blueprint values are computed for "
         "a river spot)"),
        (a.resolve_per_board != 1 and not a.resolve, f"--resolve-per-board {resolving}"),
        (a.resolve_per_board < 1, "--resolve-per-board must be at least 1"),
        (a.resolve_processes != 1 and not a.resolve, f"--resolve-processes {resolving}"),
        (a.resolve_processes < 1, "--resolve-processes must be at least 1"),
        (a.resolve_cache_mb is not None and (not a.resolve or a.resolve_per_board == 1),
         "--resolve-cache-mb applies to --resolve with --resolve-per-board above 1 "
         "(independent deals meet no spot twice)"),
        (a.resolve_cache_mb is not None and not a.resolve_cache_mb >= 0,
         "--resolve-cache-mb must be at least 0"),
        (not a.resolve_target > 0 or a.resolve_iterations < 1,
         "--resolve-target must be above 0 and --resolve-iterations positive"),
        (a.threads < 1, f"--threads must be positive, got {a.threads}"),
        (a.lbr_bucket_samples < 0,
         f"--lbr-bucket-samples must not be negative, got {a.lbr_bucket_samples}"),
        (bool(a.lbr_bucket_samples) and a.lbr is None, "--lbr-bucket-samples needs --lbr"),
        (lbr_error is not None, f"--lbr: {lbr_error}"),
        (a.history_hands is not None and not a.history, "--history-hands needs --history FILE"),
        (a.history_hands is not None and a.history_hands < 1,
         f"--history-hands must be positive, got {a.history_hands}"),
        (a.history_hands is not None and a.history_hands > a.hands,
         f"--history-hands {a.history_hands} is more than the match's --hands {a.hands}: the "
         "history holds hands of the match"),
        (bool(a.history) and not (a.vs or a.vs_checkpoint),
         "--history writes the hands of a match: add --vs BOT or --vs-checkpoint PATH"),
    )


def _lbr_settings(texts):
    """(settings, error) of ``--lbr``'s texts: None without --lbr, ``paper`` spelled out, each
    setting once; error the reason a text is not a setting (None when all are)."""
    if texts is None:
        return None, None
    from holdem.analysis.lbr.sampled import PAPER_SETTINGS, LbrSetting

    texts = texts or ["abstract:1-4"]
    texts = [t for text in texts for t in (PAPER_SETTINGS if text == "paper" else [text])]
    try:
        return list(dict.fromkeys(LbrSetting.parse(text) for text in texts)), None
    except ValueError as exc:
        return texts, exc


def _checkpoint_game(checkpoint):
    """(file, game, config) of a checkpoint file or logdir, from its header alone (the arrays
    are read by what evaluates it)."""
    path = ckpt.resolve(checkpoint)
    header, _ = ckpt.read_header(path)
    return (path, *game_of_checkpoint(ckpt.Checkpoint(path=path, header=header, arrays={})))


def _check_game(args, path, game, exact, plays, lbr):
    """The rules between the flags and the checkpoint's game (ConfigError naming the file)."""
    if args.resolve:
        if not game.supports(LINES):
            raise ConfigError(f"{path}: --resolve needs heads-up No-Limit Hold'em")
    elif plays or lbr:
        if not evaluation.applies("vs_baseline", game):
            what = "local best response (--lbr)" if args.lbr else "head-to-head play"
            raise ConfigError(f"{path}: {what} is for heads-up No-Limit Hold'em; use "
                              "--exploitability for Kuhn and Leduc")
    elif not exact:
        raise ConfigError(f"{path}: exact evaluation (--exploitability, --value) is for Kuhn "
                          f"and Leduc; for {game.name} use local best response (--lbr), a "
                          "lower bound on the exploitability")
    elif args.lbr and game.num_players != 2:
        raise ConfigError(f"{path}: local best response (--lbr) plays against one opponent; "
                          f"this game has {game.num_players} players (use --exploitability)")
    elif args.lbr and any(str(s) != "abstract:1-4" for s in args.lbr):
        raise ConfigError(f"{path}: {game.name} has its own limit actions; LBR plays them on "
                          "every round (--lbr without a setting)")


def _blueprint(path, game, config):
    return Blueprint(ckpt.load(path, mmap=True), game, config)


def _exact(args, path, game):
    checkpoint = ckpt.load(path)
    store = ckpt.store_from_checkpoint(checkpoint, game)
    print(f"checkpoint: {checkpoint.path}")
    print(f"iterations: {checkpoint.iterations}")
    if args.exploitability or args.value:
        found = evaluation.make("exploitability", game, values=args.value).measure(store)
        if args.exploitability:
            print(f"exploitability: {found.value:.9g}")
            print(f"nash_conv: {found.detail.nash_conv:.9g}")
        if args.value:
            print("value: " + " ".join(f"player{p}={v:.9g}"
                                       for p, v in enumerate(found.detail.values)))
    if args.lbr:
        from holdem.analysis.lbr.small import small_lbr_value

        print(small_lbr_value(game, store).line())
    return 0


def _measure(metric, store, seed, where):
    try:
        return metric().measure(store, seed=seed)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _play(args, bp):
    print(f"checkpoint: {bp.checkpoint.path}")
    print(f"iterations: {bp.metadata['iterations']}")
    store = blueprint_store(bp)
    matches = [(name, name, "--vs", lambda name=name: evaluation.make(
        "vs_baseline", bp.game, baseline=name, hands=args.hands)) for name in args.vs or []]
    opponent = Blueprint.load(args.vs_checkpoint) if args.vs_checkpoint else None
    if opponent is not None and opponent.config.actions != bp.config.actions:
        _cross_menu(bp, opponent, args)
        opponent = None
    if opponent is not None:
        matches.append((str(opponent.checkpoint.path), opponent, "--vs-checkpoint",
                        lambda: evaluation.make("vs_blueprint", bp.game, opponent=opponent,
                                                config=bp.config, hands=args.hands)))
    hands = []
    for name, opponent, flag, metric in matches:
        found = _measure(metric, store, args.seed, f"{flag} {name}")
        result = found.detail
        print(f"vs {name}: {result.line()}")
        if result.seats is not None:
            print(f"vs {name} by seat: {result.seat_line()}")
        print(f"vs {name} speed: {result.hands / found.seconds:.0f} hands/s "
              f"({found.seconds:.1f} s)")
        if args.history:
            count = min(args.history_hands or HISTORY_HANDS, result.hands)
            hands += head_to_head_hands(bp, opponent, count, args.seed,
                                        first_number=len(hands) + 1)
    if args.history:
        _write_history(args.history, hands, bp)
    measured = {}
    for setting in args.lbr or []:
        found = _measure(lambda: evaluation.make(
            "lbr", bp.game, hands=args.hands, threads=args.threads,
            bucket_samples=args.lbr_bucket_samples, setting=setting), store, args.seed,
            bp.checkpoint.path)
        result = found.detail
        if args.lbr_bucket_samples:
            print(f"bucket-only ({args.lbr_bucket_samples} draws per street) {result.line()}")
        else:
            print(result.line())
        if result.folds is not None and result.folds.bets:
            print(result.folds.line())
        if result.advice():
            print(result.advice())
        name = "lbr" if len(args.lbr) == 1 else f"lbr {setting}"
        print(f"{name} speed: {result.hands_per_second:.0f} hands/s ({result.seconds:.1f} s)")
        measured[str(setting)] = result
    if args.paper:
        print(_paper_table(measured, bp))
    return 0


def _resolve(args, bp):
    from holdem.subgame.lbr import resolve_lbr
    from holdem.subgame.match import resolve_match
    from holdem.subgame.resolving import CACHE_BYTES

    opponent = Blueprint.load(args.vs_checkpoint) if args.vs_checkpoint else bp
    if not opponent.game.supports(LINES):
        raise ConfigError(f"{opponent.checkpoint.path}: --resolve needs heads-up No-Limit "
                          "Hold'em")
    how = "safely, with the re-solve gadget" if args.resolve_safe else "unsafely"
    print(f"checkpoint: {bp.checkpoint.path} (re-solving the {args.resolve} on, {how})")
    print(f"iterations: {bp.metadata['iterations']}")
    deals = max(1, args.hands // 2)
    every = max(1, deals // 10)
    if args.resolve_per_board > 1:              # every group, with the result so far
        every = args.resolve_per_board

    def progress(done, total, seconds, partial=None):
        if done % every == 0 or done == total:
            so_far = f"; so far {partial.line()[5:]}" if partial is not None else ""
            print(f"  {2 * done}/{2 * total} hands, {seconds:.0f} s{so_far}", file=sys.stderr,
                  flush=True)

    options = dict(street=args.resolve, deals=deals, seed=args.seed,
                   stack=bp.game.rules.table.stack, target=args.resolve_target,
                   max_iterations=args.resolve_iterations, threads=args.threads,
                   progress=progress, safe=args.resolve_safe, processes=args.resolve_processes,
                   cache_bytes=CACHE_BYTES if args.resolve_cache_mb is None
                   else int(args.resolve_cache_mb * (1 << 20)))
    if args.vs_checkpoint:
        result = resolve_match(bp, opponent, per_board=args.resolve_per_board, **options)
        name = opponent.checkpoint.path
        print(f"vs {name}: {result.line()}")
        print(f"vs {name} speed: {result.hands / result.seconds:.1f} hands/s "
              f"({result.seconds:.1f} s)")
    for setting in args.lbr or []:
        try:
            result = resolve_lbr(bp, setting, per_board=args.resolve_per_board, **options)
        except ValueError as exc:
            raise ConfigError(f"--lbr {setting} with --resolve: {exc}") from None
        print(f"lbr {setting} {result.line()[5:]}")
    return 0


def _cross_menu(bp, opponent, args):
    """--vs-checkpoint with another bet menu: the two meet on the real game, each through its
    own translation (:func:`holdem.analysis.matches.crossmatch.cross_match`)."""
    from holdem.analysis.matches.crossmatch import cross_match

    name = str(opponent.checkpoint.path)
    if args.history:
        raise ConfigError(f"--history: not available for --vs-checkpoint {name}, whose bet menu "
                          "differs (the match is played on the real game)")
    try:
        result = cross_match(bp, opponent, hands=args.hands, seed=args.seed,
                             threads=args.threads)
    except ValueError as exc:
        raise ConfigError(f"--vs-checkpoint {name}: {exc}") from None
    print(f"vs {name}: {result.line()} (bet menus differ: played on the real game, each "
          "blueprint through its own translation, no control variate)")
    print(f"vs {name} speed: {result.hands / result.seconds:.0f} hands/s "
          f"({result.seconds:.1f} s)")


def _paper_table(measured, bp):
    """Lisý & Bowling 2017's LBR table with this blueprint as the last column (Markdown)."""
    from holdem.analysis.lbr.sampled import PAPER_SETTINGS, PUBLISHED

    table = bp.game.rules.table
    mine = f"this blueprint ({table.stack:g} BB)"
    rows = [f"| LBR setting | {' | '.join(PUBLISHED)} | {mine} |",
            "|---" * (len(PUBLISHED) + 2) + "|"]
    for setting in PAPER_SETTINGS:
        cells = [f"{PUBLISHED[bot][setting][0]:,} ± {PUBLISHED[bot][setting][1]}"
                 for bot in PUBLISHED]
        r = measured[setting]
        cells.append(f"{r.mbb_per_hand:,.0f} ± {r.ci95:,.0f}")
        rows.append(f"| {setting} | {' | '.join(cells)} |")
    return ("LBR against published bots (mbb/game; theirs as Lisý & Bowling 2017 report them, "
            "ACPC bots at 200 BB):\n" + "\n".join(rows))


def _write_history(path, hands, bp):
    comment = (f"holdem eval_blueprint --checkpoint {bp.checkpoint.path}:",
               "the first hands of each match; A is the blueprint, B the opponent, _deal the "
               "duplicate deal.", *chips_comment(bp.game.rules.table.chips_per_bb))
    try:
        write(path, hands, comment)
    except OSError as exc:
        raise ConfigError(f"--history: {exc}") from None
    print(f"history: {len(hands)} hands in {path} (PHH)")


if __name__ == "__main__":
    sys.exit(run_main(main))
