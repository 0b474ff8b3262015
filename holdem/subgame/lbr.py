"""Local best response against the re-solving bot, hand by hand in Python.

The LBR of :mod:`holdem.analysis.lbr.kernels` runs in numba over the blueprint's arrays; a bot
that solves subgames as it plays cannot run there. This is the same LBR (Lisý & Bowling 2017,
the decision rule of :mod:`holdem.analysis.lbr.kernels`) played against any bot that says what
it does with every combo (:meth:`ResolvingBot.policy`), on the real rules engine:

- LBR keeps the bot's range (1,326 weights) by Bayes' rule: each bot action multiplies it by
  the probability, per combo, of the real action seen (labels that give the same real action
  add up). The range is split by how the bot may have read LBR's off-tree sizes
  (:class:`Readings`): the bot reads a size between two of its abstract ones as either with a
  draw LBR does not see, so LBR weighs each reading by its probability, as the numba LBR does,
  and asks copies of the bot that read the hand each way, never the bot itself.
- Before ``first_round`` (the turn, for the published ``3-4`` settings) LBR checks or calls.
  From there it takes the action of its set with the highest expected chips, assuming the hand
  is then checked down: fold ``-contrib[LBR]``; check or call ``WP x pot' - contrib'[LBR]``; a
  bet or raise ``fp x contrib[bot] + (1 - fp) (WP' x pot'' - contrib''[LBR])``, where ``fp`` is
  the bot's fold probability over its range *as it answers that real size* (the re-solving bot
  re-solves with it when its tree lacks it; a blueprint-played street reads it either way, each
  reading with its probability) and ``WP'`` uses the range weighted by the probability of
  calling (:func:`raise_value`).
- Equity: LBR's share of the pot against each combo over every board completion (exact).
- Every deal is played twice, LBR in each seat with the same cards (a duplicate pair).
- All-in before the river: the hand is scored by LBR's expected chips over every completion of
  the board at that point (:func:`all_in_value`: 44 rivers from the turn, 990 from the flop),
  not by the one run-out dealt. The expectation is the same and the variance lower; a preflop
  all-in keeps its dealt board.

Only the settings that act from the turn on (``fc:3-4``, ``fcpa:3-4``, ``56:3-4``): acting
preflop with a re-solving bot is the blueprint's LBR.
"""

import copy
import time
from dataclasses import dataclass

import numpy as np

from holdem.analysis.bot import BlueprintBot, real_line, real_table
from holdem.analysis.intervals import mean_ci
from holdem.analysis.lbr.sampled import allin_share, combo_equity
from holdem.cards import COMBOS
from holdem.games.nlhe.records import Action, ActionKind
from holdem.games.nlhe.rules import HandState
from holdem.subgame.match import deals_of, group_means, play_groups
from holdem.subgame.resolving import CACHE_BYTES, ResolvingBot

BIG_BLIND = 100


def equity_vector(hole, board):
    """float64[1326]: LBR's share of the pot (ties half) with ``hole`` against each combo over
    every completion of ``board`` (4 or 5 cards); 0 for combos that share a card. The blueprint
    LBR's exact equity (:func:`holdem.analysis.lbr.sampled.combo_equity`), its unknowns zeroed for
    the belief's sums."""
    return np.nan_to_num(combo_equity(hole, board), nan=0.0)


def all_in_value(holes, board, lbr, matched):
    """LBR's expected chips when both hands are all-in for ``matched`` chips each (or one is,
    the rest returned) with ``board`` (3 or 4 cards) to complete: ``matched`` x (2 x its share
    of the pot over every completion - 1), the share the blueprint LBR scores an all-in with
    (:func:`holdem.analysis.lbr.sampled.allin_share`)."""
    return matched * (2.0 * allin_share(holes[lbr], holes[1 - lbr], board) - 1.0)


def _candidates(state, fractions, all_in):
    """LBR's real actions at ``state``: fold (when facing a bet), check or call, then bets or
    raises to the pot fractions (of the pot after calling, whole chips, at least the minimum
    raise) and all-in."""
    legal = state.legal_actions()
    out = []
    if ActionKind.FOLD in legal:
        out.append(Action.fold())
    out.append(Action.check() if ActionKind.CHECK in legal else Action.call())
    if legal.min_to == 0:
        return out
    kind = ActionKind.BET if ActionKind.BET in legal else ActionKind.RAISE
    me = state.to_act
    to_call = state.bet_to - state.street_commitments[me]
    seen = set()
    for f in fractions:
        to = round(state.bet_to + f * (state.pot_total + to_call))
        to = max(to, legal.min_to)
        if to >= legal.max_to:
            continue
        if to not in seen:
            seen.add(to)
            out.append(Action(kind, to))
    if all_in:
        out.append(Action(kind, legal.max_to))
    return out


def _value_after(state, action, lbr, belief, equity):
    """LBR's expected chips (from the start of the hand) for ``action`` under LBR's
    assumptions, and the state after a bet or raise (None otherwise), which the bot answers.
    A fold loses what LBR put in; a check or call is worth its equity against the range times
    the pot it leaves, the hand checked down from there -- never the real showdown, whose
    cards LBR does not see."""
    contrib = state.total_commitments
    if action.kind == ActionKind.FOLD:
        return -float(contrib[lbr]), None
    after = copy.deepcopy(state)
    after.apply(action)
    if action.kind in (ActionKind.CHECK, ActionKind.CALL):
        mass = belief.sum()
        wp = float(belief @ equity / mass) if mass > 0 else 0.5
        matched = min(after.total_commitments)      # what each has in once it is checked down
        return wp * 2 * matched - matched, None
    return None, after


def raise_value(after, lbr, answers, equity):
    """(LBR's expected chips, the bot's fold probability) for the bet or raise that led to
    ``after``, the bot answering with ``answers``: [(weights float64[1326], the bot's policy
    (labels, actions, probs) at ``after``)], one per reading of the bet (:class:`Readings`).
    The fold probability is over the weights of every reading together, and the equity when
    called over the combos that call in each."""
    bot = 1 - lbr
    contrib = after.total_commitments
    folded, mass, called = 0.0, 0.0, np.zeros(len(COMBOS))
    for weights, (labels, actions, probs) in answers:
        fold = np.zeros(len(COMBOS))
        call = np.zeros(len(COMBOS))
        for action, p in zip(actions, probs):
            if action.kind == ActionKind.FOLD:
                fold += p
            elif action.kind in (ActionKind.CALL, ActionKind.CHECK):
                call += p
        folded += float(weights @ fold)
        mass += float(weights.sum())
        called += weights * call
    fp = folded / mass if mass > 0 else 0.0
    wp = float(called @ equity / called.sum()) if called.sum() > 0 else 0.5
    cover = min(contrib[lbr], contrib[bot] + after.stacks[bot])
    return fp * contrib[bot] + (1 - fp) * (wp * 2 * cover - cover), fp


class _Picks:
    """Draws for :meth:`Blueprint.translate_line` that read each off-tree size as ``picks``
    says (0 the smaller size, 1 the larger; it reads the smaller where ``random()`` is under the
    smaller's probability), and the smaller past them; ``asked`` counts the draws taken."""

    def __init__(self, picks):
        self.picks, self.asked = picks, 0

    def random(self):
        i, self.asked = self.asked, self.asked + 1
        return 1.0 if i < len(self.picks) and self.picks[i] else 0.0


class _ReadingBlueprintBot(BlueprintBot):
    """A :class:`BlueprintBot` that reads the hand's off-tree sizes as ``picks`` (:class:`_Picks`)
    instead of with its hand's seed."""

    def __init__(self, bp, big_blind, picks):
        super().__init__(bp, big_blind, np.random.default_rng(0))
        self.picks = picks

    def draws(self):
        return _Picks(self.picks)


class Readings:
    """LBR's belief about the bot: its range (weights per combo) split by how the bot has read
    LBR's off-tree sizes, as the numba LBR's belief is (:mod:`holdem.analysis.lbr.belief_kernels`).

    The bot reads a size between two of its abstract sizes as either, with a draw seeded once
    per hand that LBR does not see (:meth:`BlueprintBot.translate`). Each reading is a branch:
    its picks (0 or 1 per drawn size, in line order), a copy of the bot that reads the hand so
    (it answers every line as the real bot would with those draws: on a blueprint street its
    node's policy, on a re-solved one a solve from the ranges its reading gives), and its
    weights, the range times the probability of the reading. A bet of LBR that the bot reads by
    translation splits each branch in two (``pseudo-harmonic`` probabilities of that branch's
    node); a bot action multiplies each branch by the probability its copy gives that action.
    The real bot is never asked: its draws stay its own. A bot that is not a
    :class:`ResolvingBot` (tests' fixed bots) reads nothing and keeps one branch, itself."""

    def __init__(self, bot, state, lbr):
        weights = np.ones(len(COMBOS))
        mine = set(state.hole_cards[lbr])
        weights[[a in mine or b in mine for a, b in COMBOS.tolist()]] = 0.0
        self.bot, self.reads = bot, isinstance(bot, ResolvingBot)
        self.branches = {(): weights}               # picks -> weights
        self.copies = {}
        self.empty = 0                  # bot actions no branch gave weight (belief kept)

    def total(self):
        """float64[1326]: the bot's range, every reading together."""
        return sum(self.branches.values())

    def remove(self, cards):
        """Zero the combos holding any of ``cards`` (dealt to the board)."""
        dead = [a in cards or b in cards for a, b in COMBOS.tolist()]
        for weights in self.branches.values():
            weights[dead] = 0.0

    def copy_of(self, picks):
        """The bot reading the hand's off-tree sizes as ``picks``."""
        if not self.reads:
            return self.bot
        if picks not in self.copies:
            twin = copy.copy(self.bot)
            twin.blueprint = _ReadingBlueprintBot(self.bot.bp, self.bot.big_blind, picks)
            twin.rng = None                             # it never decides
            twin._hand, twin._game, twin.solves, twin.reused = None, None, 0, 0
            self.copies[picks] = twin
        return self.copies[picks]

    def solves(self):
        """Subgames the copies solved."""
        return sum(twin.solves for twin in self.copies.values())

    def _split(self, after):
        """[(picks, probability)] per branch with weight: how each reads the last action of
        ``after`` (one entry where it draws nothing there)."""
        out = {}
        for picks, weights in self.branches.items():
            out[picks] = [(picks, 1.0)]
            if not self.reads or not weights.any() or int(after.street) >= self.bot.street:
                continue                    # a re-solved street holds the real size
            draws = _Picks(picks)
            try:
                _, notes = self.bot.bp.translate_line(real_line(after), self.bot.big_blind,
                                                      rng=draws, stacks=after.config.stacks)
            except ValueError:              # the line left the tree: the bot checks or calls
                continue
            if draws.asked > len(picks):
                out[picks] = [(picks + (k,), option[2])
                              for k, option in enumerate(notes[-1].options)]
        return out

    def answers(self, after, hand):
        """The bot's answers to LBR's bet or raise on ``after`` (a copy of ``hand`` with the
        action applied) for :func:`raise_value`: per reading, its weights and policy."""
        out = []
        for picks, children in self._split(after).items():
            weights = self.branches[picks]
            if not weights.any():
                continue
            for child, p in children:
                out.append((weights * p, self.copy_of(child).policy(after, hand)))
        return out

    def act(self, state, action):
        """LBR plays ``action`` at ``state`` (not applied yet): a bet or raise splits each
        branch by its readings."""
        if action.kind not in (ActionKind.BET, ActionKind.RAISE):
            return
        after = copy.deepcopy(state)
        after.apply(action)
        branches = {}
        for picks, children in self._split(after).items():
            for child, p in children:
                branches[child] = self.branches[picks] * p
        self.branches = branches

    def observe(self, state, action):
        """The bot plays ``action`` at ``state`` (not applied yet): Bayes' rule per branch
        (labels that give the same real action add up); an action no branch gives weight to
        leaves the belief as it was."""
        seen = {}
        for picks, weights in self.branches.items():
            if weights.any():
                _, actions, probs = self.copy_of(picks).policy(state)
                seen[picks] = sum((p for a, p in zip(actions, probs) if a == action),
                                  np.zeros(len(COMBOS)))
        if not any((self.branches[k] * v).any() for k, v in seen.items()):
            self.empty += 1
            return
        self.branches = {k: self.branches[k] * v for k, v in seen.items()
                         if (self.branches[k] * v).any()}


def lbr_hand(state, lbr, bot, fractions, all_in, first_round, stats):
    """Play one hand: LBR in seat ``lbr`` against ``bot`` (a ResolvingBot); LBR's chips. LBR
    decides on its :class:`Readings` of the bot; the real bot plays with its own draws."""
    readings = Readings(bot, state, lbr)
    equity_cache = {}
    all_in = None
    try:
        while not state.is_terminal:
            if state.to_act != lbr:
                decision = bot.decide(state)
                readings.observe(state, decision.action)
                all_in = _apply(state, decision.action)
                continue
            if int(state.street) < first_round:
                legal = state.legal_actions()
                all_in = _apply(state, Action.check() if ActionKind.CHECK in legal
                                else Action.call())
                continue
            board = state.board
            readings.remove(set(board))
            key = len(board)
            if key not in equity_cache:
                equity_cache[key] = equity_vector(state.hole_cards[lbr], board)
            equity = equity_cache[key]
            belief = readings.total()
            best, best_value = None, -np.inf
            for action in _candidates(state, fractions, all_in):
                value, after = _value_after(state, action, lbr, belief, equity)
                if after is not None:
                    value, _ = raise_value(after, lbr, readings.answers(after, state), equity)
                if value > best_value + 1e-9:
                    best, best_value = action, value
            stats["decisions"] += 1
            stats["raises"] += best.kind in (ActionKind.BET, ActionKind.RAISE)
            readings.act(state, best)
            all_in = _apply(state, best)
    finally:
        stats["solves"] = stats.get("solves", 0) + readings.solves()
        stats["empty"] = stats.get("empty", 0) + readings.empty
    if all_in is not None:
        return all_in if lbr == 0 else -all_in
    return state.payoffs()[lbr]


def _apply(state, action):
    """Apply ``action``. When it leaves both hands all-in on the flop or turn, returns seat 0's
    expected chips over the run-outs (the hand's score); None otherwise."""
    seen = len(state.board)
    state.apply(action)
    if state.is_terminal and 3 <= seen < 5 and not any(state.folded):
        matched = min(state.total_commitments)
        return all_in_value(state.hole_cards, state.full_board[:seen], 0, matched)
    return None


@dataclass
class ResolveLbrResult:
    """LBR against the re-solving bot and, on the same deals and draws, against its blueprint
    alone (mbb/hand, 95% CI half-widths), and their deal-by-deal difference."""

    mbb_per_hand: float
    ci95: float
    blueprint_mbb: float
    blueprint_ci95: float
    difference: float
    difference_ci95: float
    hands: int                  # hands against each bot (two per duplicate deal)
    solves: int
    seconds: float              # both matches
    reused: int = 0             # solutions read from the cache (``per_board``) instead

    def line(self):
        return (f"lbr: {self.mbb_per_hand:.0f} ± {self.ci95:.0f} mbb/hand against the "
                f"re-solving bot, {self.blueprint_mbb:.0f} ± {self.blueprint_ci95:.0f} against "
                f"its blueprint alone, difference {self.difference:.0f} ± "
                f"{self.difference_ci95:.0f} (95% CI, {self.hands} hands each, {self.solves} "
                f"solves{f', {self.reused} read again' if self.reused else ''}, "
                f"{2 * self.hands / self.seconds:.2f} hands/s)")


def resolve_lbr(bp, setting, street="river", deals=100, seed=0, stack=100, target=0.5,
                max_iterations=300, menu=None, threads=1, progress=None, safe=False,
                per_board=1, processes=1, cache_bytes=CACHE_BYTES):
    """LBR with ``setting`` (an :class:`holdem.analysis.lbr.sampled.LbrSetting` acting from the
    turn) against ``bp`` re-solving from ``street``, and against ``bp`` alone on the same deals, the
    bot drawing from the same stream (so both play alike until the re-solved street).

    ``per_board`` > 1 deals the hands in groups that share a board: the bot meets the same
    public spot with the same ranges again within a group and reads the solution from a
    :class:`SolveCache` (of ``cache_bytes``, per process) instead of solving again (a turn
    solve takes seconds); the intervals are then computed over the groups' means.
    ``processes`` > 1 plays the groups on that many processes
    (:func:`holdem.subgame.match.play_groups`): the same result, sooner."""
    from holdem.analysis.lbr.sampled import ROUNDS

    first_round = ROUNDS[setting.rounds]
    if first_round < 2 or setting.actions == "abstract":
        raise ValueError(f"LBR against a re-solving bot acts from the turn on with fc, fcpa or "
                         f"56 (3-4 settings), not {setting}")
    spec = dict(bp=bp, setting=str(setting), street=street, deals=deals, seed=seed,
                stack=stack, target=target, max_iterations=max_iterations, menu=menu,
                threads=threads, safe=safe, per_board=per_board, cache_bytes=cache_bytes)
    done, counts = {}, [0, 0]                  # group -> its deals' rows; solves, reused
    start = time.perf_counter()

    def on_group(k, output):
        done[k] = output[0]
        counts[0] += output[1]
        counts[1] += output[2]
        if progress is not None:
            groups = [done[g] for g in sorted(done)]
            played = sum(map(len, groups))
            partial = None
            if len(groups) >= 2:       # the groups finished so far (any order: independent)
                rows = [row for group in groups for row in group]
                partial = _result([r[0] for r in rows], [r[1] for r in rows], per_board,
                                  counts[0], time.perf_counter() - start, counts[1])
            progress(played, deals, time.perf_counter() - start, partial)

    play_groups(_lbr_deals, spec, deals, per_board, processes, on_group)
    rows = [row for k in sorted(done) for row in done[k]]
    return _result([r[0] for r in rows], [r[1] for r in rows], per_board, counts[0],
                   time.perf_counter() - start, counts[1])


def _lbr_deals(spec, indices, cache):
    """The deals ``indices`` of :func:`resolve_lbr`: per deal (LBR's mbb/hand against the bot,
    against its blueprint alone), the solves made and the solutions read from ``cache``."""
    from holdem.analysis.lbr.sampled import ROUNDS, LbrSetting

    bp, setting = spec["bp"], LbrSetting.parse(spec["setting"])
    first_round = ROUNDS[setting.rounds]
    fractions = tuple(float(f) for f in setting.fractions)
    table = real_table(bp, round(spec["stack"] * BIG_BLIND), BIG_BLIND)
    to_mbb = 1000.0 / BIG_BLIND
    stats = {"decisions": 0, "raises": 0}
    rows, solves, hits = [], 0, cache.hits if cache else 0
    for holes, board, bot_seeds in deals_of(table, spec["seed"], spec["deals"],
                                            spec["per_board"], indices=indices):
        totals = [0.0, 0.0]
        for lbr in (0, 1):
            for k, bot_street in enumerate((spec["street"], 4)):      # 4: never re-solves
                bot = ResolvingBot(bp, BIG_BLIND, np.random.default_rng(bot_seeds[lbr]),
                                   street=bot_street, target=spec["target"],
                                   max_iterations=spec["max_iterations"], menu=spec["menu"],
                                   threads=spec["threads"], safe=spec["safe"], cache=cache)
                state = HandState(table, hole_cards=holes, board=board)
                totals[k] += lbr_hand(state, lbr, bot, fractions, setting.bet_allin,
                                      first_round, stats) * to_mbb
                solves += bot.solves
        rows.append((totals[0] / 2, totals[1] / 2))
    return rows, solves + stats.get("solves", 0), (cache.hits - hits if cache else 0)


def _result(resolved, alone, per_board, solves, seconds, reused):
    """The :class:`ResolveLbrResult` of the deals played (per deal: LBR's mbb/hand against the
    bot and against its blueprint alone); intervals over the groups of ``per_board``."""
    hands = 2 * len(resolved)
    difference = np.array(resolved) - np.array(alone)
    if per_board > 1:
        resolved, alone, difference = (group_means(v, per_board)
                                       for v in (resolved, alone, difference))
    mean, ci = mean_ci(resolved, student=True)
    bmean, bci = mean_ci(alone, student=True)
    dmean, dci = mean_ci(difference, student=True)
    return ResolveLbrResult(mean, ci, bmean, bci, dmean, dci, hands, solves, seconds, reused)
