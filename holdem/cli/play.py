"""Play No-Limit Hold'em in the terminal against a blueprint: heads-up, or in one seat of a 3-6
player table (a six-max blueprint: you and five bots).

    python -m holdem.cli.play --checkpoint runs/x [--seed S] [--hands N] [--show-probs]
                              [--stack 100] [--big-blind 100] [--history session.phhs]

The real game runs on the exact rules engine (:class:`holdem.games.nlhe.rules.HandState`, integer
chips, 100 chips = 1 big blind by default). The bot is :class:`holdem.analysis.bot.BlueprintBot`:
it maps the real action history onto the blueprint's abstract betting tree (a size between two
abstract sizes is read as one of them at random, drawn once per hand, and the game prints that
mapping after your bet), samples an abstract action and turns it back into a legal real action;
off the tree it checks or calls; at a table of 3-6 it plays every seat but yours. Seats
rotate: heads-up in odd-numbered hands you are the small blind (= button, first to act preflop),
in even-numbered ones the big blind; at a table of n, hand k puts you in seat (k - 1) mod n
(small blind, big blind, UTG, ..., button). Stacks are reset every hand.

Commands: ``f`` fold, ``c`` check or call, ``k`` check, ``b N`` / ``r N`` bet or raise to N chips
(street total; ``r 7bb`` in big blinds), ``a`` all-in, ``?`` legal actions, ``p`` show or hide the
bot's probabilities, ``q`` quit. Input is read with ``input()``, so a pipe can drive the game;
end of input quits cleanly. ``--history FILE`` writes every finished hand to FILE in the Poker
Hand History format (:mod:`holdem.analysis.matches.hand_history`).
"""

import os
import sys

import numpy as np

from holdem.analysis.bot import BlueprintBot, real_table, warm_up
from holdem.cli.common import (ArgumentParser, non_negative_int, output_file, positive_float,
                               run_main)
from holdem.games.nlhe.records import Action, ActionKind, DealRecord, IllegalActionError

HELP = ("f fold | c check/call | k check | b N bet to N | r N raise to N (chips, or e.g. 7bb) | "
        "a all-in | ? legal actions | p bot probabilities on/off | q quit")
STREETS = ("preflop", "flop", "turn", "river")


class Quit(Exception):
    """The player typed q or the input ended."""


# -- the human ------------------------------------------------------------------------------
def parse_command(text, big_blind):
    """(word, amount) of a typed command; word is one of fold, check, call, checkcall, wager,
    allin, help, probs, quit (amount only for wager). Raises ValueError with a hint."""
    tokens = text.strip().lower().split()
    if not tokens:
        raise ValueError("empty input")
    words = {"f": "fold", "fold": "fold", "k": "check", "check": "check", "c": "checkcall",
             "call": "call", "a": "allin", "allin": "allin", "all-in": "allin", "?": "help",
             "help": "help", "p": "probs", "q": "quit", "quit": "quit", "b": "wager",
             "bet": "wager", "r": "wager", "raise": "wager"}
    word = words.get(tokens[0])
    if word is None:
        raise ValueError(f"unknown command {tokens[0]!r}")
    if word != "wager":
        if len(tokens) > 1:
            raise ValueError(f"{tokens[0]!r} takes no amount")
        return word, None
    if len(tokens) != 2:
        raise ValueError(f"{tokens[0]!r} needs one amount: the street total in chips, e.g. "
                         f"'{tokens[0]} {3 * big_blind}' or '{tokens[0]} 3bb'")
    amount = tokens[1]
    try:
        chips = (float(amount[:-2]) * big_blind if amount.endswith("bb") else float(amount))
    except ValueError:
        raise ValueError(f"bad amount {amount!r}") from None
    if chips != int(chips) or chips <= 0:
        raise ValueError(f"amount {amount!r} is not a positive whole number of chips")
    return word, int(chips)


def human_action(word, amount, state):
    if word == "checkcall":
        word = "check" if state.can_check() else "call"
    if word == "wager":
        return Action(ActionKind.BET if state.bet_to == 0 else ActionKind.RAISE, amount)
    return Action({"fold": ActionKind.FOLD, "check": ActionKind.CHECK, "call": ActionKind.CALL,
                   "allin": ActionKind.ALL_IN}[word])


def legal_text(state):
    legal, p = state.legal_actions(), state.to_act
    out = []
    if ActionKind.FOLD in legal:
        out.append("f (fold)")
    if ActionKind.CHECK in legal:
        out.append("k or c (check)")
    if ActionKind.CALL in legal:
        out.append(f"c (call {legal.call_to - state.street_commitments[p]})")
    if legal.min_to:
        word = "b (bet" if ActionKind.BET in legal else "r (raise"
        out.append(f"{word} to {legal.min_to}..{legal.max_to})")
    out.append(f"a (all-in: {state.street_commitments[p] + state.stacks[p]})")
    return "legal: " + ", ".join(out)


def to_you(message, player):
    """A rules message about ``player`` (``player 0 cannot check: ...``) as said to the person
    in that seat (``you cannot check: ...``)."""
    for them, you in ((f"player {player}'s", "your"), (f"player {player}", "you"),
                      ("since they acted", "since you acted"), ("they may", "you may"),
                      ("their stack", "your stack")):
        message = message.replace(them, you)
    return message


def describe(rec, who):
    """'You call 50', 'Bot raises to 700 (all-in)', ..."""
    verb = {ActionKind.FOLD: "fold", ActionKind.CHECK: "check", ActionKind.CALL: "call",
            ActionKind.BET: "bet", ActionKind.RAISE: "raise"}[rec.kind]
    amount = {ActionKind.CALL: f" {rec.chips}", ActionKind.BET: f" {rec.amount}",
              ActionKind.RAISE: f" to {rec.amount}"}.get(rec.kind, "")
    ending = "" if who == "You" else "s"
    return f"{who} {verb}{ending}{amount}" + (" (all-in)" if rec.is_all_in else "")


# -- the re-solving bot's solves ------------------------------------------------------------
class SolveProgress:
    """What a re-solving bot's solve shows while you wait: a line as it starts (the street, the
    tree, its stopping points), one every ``interval`` seconds (iteration, exploitability, time
    so far and at most how long is left: the iterations left at the pace so far, or the time
    limit and one more check if sooner) and one as it ends. An instance is the
    ``progress(street, solver)`` of :class:`holdem.subgame.resolving.ResolvingBot` ``bot``,
    whose stopping points it shows."""

    def __init__(self, bot, write, interval=5.0):
        self.bot, self.write, self.interval = bot, write, interval

    def __call__(self, street, solver):
        from holdem.subgame.tree import RIVER

        bot = self.bot
        name = "river" if street == RIVER else "turn"
        limit = f" or {bot.time_limit:g} s" if bot.time_limit is not None else ""
        self.write(f"  (bot: solving the {name}, a {solver.tree.num_nodes:,}-node tree: until "
                   f"{bot.target:g}% of the pot, {bot.max_iterations:,} iterations{limit})")
        shown, last = [0.0], [0]

        def progress(iterations, pct, seconds):
            pace, step, last[0] = seconds / iterations, iterations - last[0], iterations
            reached = pct <= bot.target
            timed_out = bot.time_limit is not None and seconds >= bot.time_limit
            if reached or timed_out or iterations >= bot.max_iterations:
                why = ("target reached" if reached else "time limit" if timed_out
                       else "iteration cap")
                self.write(f"  (bot: solved in {seconds:.1f} s, {iterations:,} iterations, "
                           f"exploitability {pct:.2g}% of the pot: {why})")
            elif seconds - shown[0] >= self.interval:
                shown[0] = seconds
                left = pace * (bot.max_iterations - iterations)
                if bot.time_limit is not None:       # it stops at the first check past it
                    left = min(left, bot.time_limit - seconds + pace * step)
                self.write(f"  (bot: iteration {iterations:,}, exploitability {pct:.2g}% of "
                           f"the pot, {seconds:.0f} s; at most ~{left:.0f} s more)")
        return progress


# -- the game -------------------------------------------------------------------------------
class PlaySession:
    """A session of hands against the bot at the terminal; ``read``/``write`` are
    ``input``/``print`` by default."""

    def __init__(self, bp, *, seed, stack, big_blind, show_probs=False, read=input,
                 write=print, history=None, resolve=None, safe=False, time_limit=None,
                 progress_interval=5.0):
        """``history``: a :class:`holdem.analysis.matches.hand_history.HistoryFile` that every
        finished hand is added to; ``resolve``: "turn" or "river" for a bot that solves the rest of
        the hand from that street (:class:`holdem.subgame.resolving.ResolvingBot`), each solve
        stopped after ``time_limit`` seconds, its progress shown every ``progress_interval``
        seconds (:class:`SolveProgress`)."""
        from holdem.cards import format_cards

        self.bp, self.bb, self.show_probs = bp, big_blind, show_probs
        self.read, self.write, self.cards = read, write, format_cards
        self.config = real_table(bp, stack, big_blind)
        deal_seed, bot_seed = np.random.SeedSequence(seed).spawn(2)
        self.deal_rng = np.random.default_rng(deal_seed)
        if resolve:
            from holdem.subgame.resolving import ResolvingBot

            threads = max(1, min(8, os.cpu_count() or 1))   # a turn spot's rivers in parallel
            self.bot = ResolvingBot(bp, big_blind, np.random.default_rng(bot_seed),
                                    street=resolve, safe=safe, threads=threads,
                                    time_limit=time_limit)
            self.bot.progress = SolveProgress(self.bot, write, progress_interval)
        else:
            self.bot = BlueprintBot(bp, big_blind, np.random.default_rng(bot_seed))
        self.total, self.hands = 0, 0
        self.history = history
        self.num_players = bp.game.num_players
        engine = bp.game.cards.engine
        self.seats = tuple(engine.seat_name(q, self.num_players) for q in range(self.num_players))

    def who(self, seat, human):
        """'You', 'Bot' (heads-up) or 'Bot (cutoff)'."""
        if seat == human:
            return "You"
        return "Bot" if self.num_players == 2 else f"Bot ({self.seats[seat]})"

    def bb_text(self, chips):
        return f"{chips / self.bb:+g} bb"

    def play(self, num_hands=0):
        """Play ``num_hands`` hands (0 = until q or end of input); returns the hands played."""
        from holdem.games.nlhe.rules import HandState

        try:
            while not num_hands or self.hands < num_hands:
                self.play_hand(HandState(self.config, rng=self.deal_rng),
                               human=self.hands % self.num_players)
        except Quit as stop:
            self.write(str(stop))
        rate = f" ({1000 * self.total / self.bb / self.hands:+.0f} mbb/hand)" if self.hands else ""
        plural = "" if self.hands == 1 else "s"
        self.write(f"Final: {self.bb_text(self.total)} over {self.hands} hand{plural}{rate}")
        return self.hands

    def play_hand(self, state, human):
        number, seats = self.hands + 1, self.seats
        bots = (f"the bot the {seats[1 - human]}" if self.num_players == 2
                else f"bots in the other {self.num_players - 1} seats")
        self.write(f"\n=== Hand {number}: you are the {seats[human]}, {bots} "
                   f"(stacks {self.config.stacks[0]}, blinds {self.config.small_blind}/"
                   f"{self.config.big_blind}) ===")
        self.write(f"Your cards: {self.cards(state.hole_cards[human])}")
        shown = 0
        while not state.is_terminal:
            shown = self.show_deals(state, shown)
            if state.to_act == human:
                self.human_turn(state, human, number)
            else:
                decision = self.bot.decide(state)
                if decision.note:
                    self.write(f"  ({decision.note})")
                if self.show_probs and decision.probs:
                    mix = "  ".join(f"{a} {100 * p:.1f}%" for a, p in decision.probs.items())
                    self.write(f"  bot strategy at [{' '.join(decision.labels) or 'root'}]: "
                               f"{mix} -> {decision.label}")
                seat = state.to_act
                self.write(describe(state.apply(decision.action), self.who(seat, human)))
        self.show_deals(state, shown)
        self.finish(state, human)

    def show_deals(self, state, shown):
        history = state.history
        for rec in history[shown:]:
            if isinstance(rec, DealRecord):
                board = state.full_board[:rec.street.num_board_cards]
                self.write(f"--- {STREETS[rec.street]}: {self.cards(board)}")
        return len(history)

    def human_turn(self, state, human, number):
        street_in = state.street_commitments
        board = f" {self.cards(state.board)}" if state.board else ""
        others = " | ".join(
            f"{self.who(q, human).lower()} {state.stacks[q]} behind, {street_in[q]} in"
            for q in range(self.num_players) if q != human and not state.folded[q])
        self.write(f"[{STREETS[state.street]}{board}] you {self.cards(state.hole_cards[human])}"
                   f" | pot {state.pot_total} | you {state.stacks[human]} behind, "
                   f"{street_in[human]} in | {others}"
                   f" | to call {state.bet_to - street_in[human]}")
        while True:
            try:
                text = self.read(f"hand {number}, your action (? for help): ")
            except EOFError:
                raise Quit("\nEnd of input: stopping.") from None
            try:
                word, amount = parse_command(text, self.bb)
            except ValueError as exc:
                self.write(f"{exc}. {HELP}")
                continue
            if word == "help":
                self.write(legal_text(state))
                self.write(HELP)
            elif word == "probs":
                self.show_probs = not self.show_probs
                self.write(f"bot probabilities {'on' if self.show_probs else 'off'}")
            elif word == "quit":
                raise Quit(f"Quit (hand {number} not counted).")
            else:
                try:
                    rec = state.apply(human_action(word, amount, state))
                except (IllegalActionError, TypeError) as exc:
                    self.write(f"Illegal: {to_you(str(exc), human)}. {legal_text(state)}")
                    continue
                self.write(describe(rec, "You"))
                if rec.kind in (ActionKind.BET, ActionKind.RAISE) and not state.is_terminal:
                    reading = self.bot.reading(state)
                    if reading:
                        self.write(f"  ({reading})")
                return

    def finish(self, state, human):
        won = state.payoffs()[human]
        live = [q for q in range(self.num_players) if not state.folded[q]]
        if len(live) > 1:
            shown = ", ".join(f"{self.who(q, human).lower()} {self.cards(state.hole_cards[q])}"
                              for q in live)
            self.write(f"Showdown: {shown}, board {self.cards(state.board)}")
        self.write(self.line_text(state))
        verb = "win" if won > 0 else ("lose" if won < 0 else "split, net")
        self.total += won
        self.hands += 1
        plural = "" if self.hands == 1 else "s"
        self.write(f"Result: you {verb} {abs(won)} chips ({self.bb_text(won)}). Running total: "
                   f"{self.bb_text(self.total)} after {self.hands} hand{plural}")
        if self.history is not None:
            from holdem.analysis.matches.hand_history import hand_from_state

            n = self.num_players
            players = [f"Bot: blueprint {self.bp.metadata['path']}"] * n
            players[human] = "You"
            seats = [(q - human) % n + 1 for q in range(n)]       # you in seat 1
            self.history.add(hand_from_state(state, players, seats, self.hands))

    def line_text(self, state):
        """The hand's betting line as the bot's tree read it, in the notation ``--spot``,
        ``Blueprint.query`` and the charts take (docs/glossary.md#games-and-abstraction: line)."""
        try:
            labels, _ = self.bot.translate(state)
        except ValueError as exc:
            return f"Line: off the bot's tree ({exc})"
        return (f"Line: {' '.join(labels) or '(none)'} (the bot's tree; a prefix of it goes "
                f"into inspect_blueprint --spot \"LINE | HOLE | BOARD\")")


# -- command line ---------------------------------------------------------------------------
def build_parser():
    p = ArgumentParser(prog="python -m holdem.cli.play",
                       description="Play No-Limit Hold'em against a blueprint: heads-up, or "
                       "in one seat of its 3-6 player table with a bot in every other seat. "
                       "Commands at the prompt: " + HELP)
    p.add_checkpoint()
    p.add_argument("--seed", type=non_negative_int, help="seed for the cards and the bot "
                   "(default: random, printed at the start)")
    p.add_argument("--hands", type=non_negative_int, default=0,
                   help="hands to play (default 0 = until q or end of input)")
    p.add_argument("--show-probs", action="store_true",
                   help="show the bot's probabilities before each of its actions")
    p.add_argument("--stack", type=positive_float, default=100.0,
                   help="starting stack of each player every hand, in big blinds (default 100)")
    p.add_argument("--big-blind", type=non_negative_int, default=100,
                   help="big blind in chips (default 100; amounts you type are chips)")
    p.add_argument("--resolve", choices=("turn", "river"),
                   help="the bot plays its blueprint until this street, then solves the rest "
                        "of the hand with exact cards from both players' ranges, re-solving "
                        "when you bet a size its tree lacks (docs/studying.md#re-solving-bot); "
                        "a river solve takes a fraction of a second, a turn solve seconds to "
                        "minutes: the game shows its progress and how long it may take")
    p.add_argument("--resolve-time-limit", type=positive_float, metavar="SECONDS",
                   help="with --resolve: stop each solve after SECONDS (at its next check); "
                        "the bot plays the strategy reached (default: no limit, each solve "
                        "runs to 0.5%% of the pot or 300 iterations)")
    p.add_argument("--resolve-safe", action="store_true",
                   help="with --resolve river: safe re-solving (docs/studying.md#re-solving-bot)")
    p.add_argument("--history", metavar="FILE", type=output_file,
                   help="write every finished hand (both players' cards, the board, actions, "
                        "final stacks) to FILE in the Poker Hand History format, one table per "
                        "hand (.phhs), rewritten after each hand; replaces FILE only if it is a "
                        "hand history holdem wrote")
    return p


COMPILE_SECONDS = 4
"""CPU seconds that compiling the bucket lookup and the hand evaluator takes with a cold numba
cache (2-core development machine)."""


def main(argv=None):
    args = build_parser().parse_args(argv)
    from holdem.analysis.blueprint import Blueprint
    from holdem.config import ConfigError
    from holdem.games import CARDS, LINES
    from holdem.metrics import compile_notice

    bp = Blueprint.load(args.checkpoint)
    if not bp.game.supports(CARDS):
        raise ConfigError(f"checkpoint {args.checkpoint}: play needs a No-Limit Hold'em "
                          f"blueprint, not {bp.game.name!r}")
    if args.resolve and not bp.game.supports(LINES):
        raise ConfigError(f"--resolve: re-solving is heads-up only; this blueprint has "
                          f"{bp.game.num_players} players")
    if args.resolve_safe and args.resolve != "river":
        raise ConfigError("--resolve-safe needs --resolve river")
    if args.resolve_time_limit is not None and not args.resolve:
        raise ConfigError("--resolve-time-limit needs --resolve turn or river")
    if args.big_blind < 2:
        raise ConfigError("--big-blind must be at least 2 chips")
    stack = round(args.stack * args.big_blind)
    if stack <= args.big_blind:
        raise ConfigError(f"--stack {args.stack:g} is not more than one big blind")
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 10**9)
    history = None
    if args.history:
        from holdem.analysis.matches.hand_history import HistoryFile, chips_comment

        try:
            history = HistoryFile(args.history, (
                f"holdem play against {bp.metadata['path']}, seed {seed}.",
                *chips_comment(args.big_blind)))
        except (ValueError, OSError) as exc:
            raise ConfigError(f"--history: {exc}") from None
    echo = not sys.stdin.isatty()

    def read(prompt):
        text = input(prompt)
        if echo:
            print(text)         # so a piped game reads like a typed one
        return text

    with compile_notice(COMPILE_SECONDS):
        warm_up(bp)
    tree_stack = bp.game.rules.table.stack
    print(f"Blueprint {bp.metadata['path']} ({bp.metadata['iterations']:,} iterations), seed "
          f"{seed}. Commands: {HELP}")
    if abs(args.stack - tree_stack) > 1e-9:
        print(f"note: the blueprint was trained with {tree_stack:g} bb stacks, this game uses "
              f"{args.stack:g} bb")
    PlaySession(bp, seed=seed, stack=stack, big_blind=args.big_blind,
                show_probs=args.show_probs, read=read, history=history,
                resolve=args.resolve, safe=args.resolve_safe,
                time_limit=args.resolve_time_limit).play(args.hands)
    if history is not None:
        plural = "" if len(history.hands) == 1 else "s"
        print(f"Hand history: {len(history.hands)} hand{plural} in {history.path} (PHH)")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
