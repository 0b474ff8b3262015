"""A bot that plays its blueprint until the turn or the river, then solves the rest of the hand
with exact cards: what Libratus and Pluribus do, here in its plainest form.

At the first decision of a street from ``street`` on (``RIVER`` or ``TURN``), the bot builds a
:class:`holdem.subgame.Spot` from the real hand -- the pot and effective stack at the start of
the street in real chips, the board -- and both players' ranges there: the blueprint's
(:meth:`Blueprint.range` at the abstract line the bot's translation reads) on the first solved
street, and on a later street the previous solution's (each range times the solved strategy of
its player along the street's real line). It solves the street (a turn subgame covers every
river), plays its combo's strategy at the real line, and re-solves the street, with the real
size added to the tree, when the opponent bets or raises an amount the tree lacks.

Safety: this is *unsafe* re-solving (Ganzfried & Sandholm 2015; Brown & Sandholm 2017 call it
"unsafe subgame solving"): the opponent's range is taken from the model (the blueprint, then the
solution) and nothing keeps the opponent from doing better against the new strategy than it
did against the blueprint. It is the cheapest technique and what the measurements in
docs/studying.md#re-solving-bot are for; where a range is empty (an opponent who took an action
the model gives no weight) the bot falls back to the blueprint.
"""

from collections import OrderedDict

import numpy as np

from holdem.analysis.bot import (BlueprintBot, Decision, bot_action, real_line,
                                 real_raise_to)
from holdem.games.nlhe.records import ActionKind
from holdem.subgame.blueprint import subgame_ranges
from holdem.subgame.solver import COMBOS, Spot, SubgameSolver, combo_index
from holdem.subgame.tree import CHANCE, RIVER, TURN, BetMenu

STREETS = {"turn": TURN, "river": RIVER}

# The sizes of a subgame that starts on the turn: pot-size bets and raises, all-in, three bets
# or raises a street. A turn subgame holds a river subtree per card for every line that sees
# the river, so its size multiplies with the menu's: the river menu's half-pot bets and an
# uncapped raise war made 25,000-40,000-node trees that took 60-120 s to solve on two cores
# (docs/studying.md#re-solving-bot); this one has 4,000-11,000 nodes. The river, solved again
# when its card comes, keeps the full default menu (BetMenu()).
TURN_MENU = BetMenu.uniform(bets=(1.0,), raises=(1.0,), all_in=True, max_raises=3)
CACHE_BYTES = 2 << 30        # what a SolveCache keeps by default: two GiB of solutions


class SolveCache:
    """Solutions by spot (board, pot, stack, ranges, extra sizes, gadget, target): a bot that
    meets the same spot again -- the same public line with the same ranges, as in an
    evaluation that deals many hands on one board -- reads the solution instead of solving it
    again. Solving is deterministic, so a hit is what a solve would give. Shared by the bots of
    an evaluation. It holds the solvers' arrays, so it keeps the most recently used ones up to
    ``max_bytes`` of them (and at most ``size`` solutions when given), always the newest: a
    board of a turn re-solving LBR meets about ten turn spots of 27-95 MB each, and a cache
    smaller than that solves most of them again."""

    def __init__(self, size=None, max_bytes=CACHE_BYTES):
        if size is not None and size < 1:
            raise ValueError(f"a solve cache holds at least one solution, not {size}")
        self.size, self.max_bytes = size, max_bytes
        self.hits, self.bytes, self._items = 0, 0, OrderedDict()

    def __len__(self):
        return len(self._items)

    def get(self, key):
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return item[0]

    def put(self, key, solver):
        if key in self._items:
            self.bytes -= self._items.pop(key)[1]
        size = solver.allocated_bytes()
        self._items[key] = (solver, size)
        self.bytes += size
        while len(self._items) > 1 and ((self.size is not None and len(self._items) > self.size)
                                        or self.bytes > self.max_bytes):
            self.bytes -= self._items.popitem(last=False)[1][1]


def street_labels(state, street):
    """The real decisions on ``street`` as subgame labels (chips in on the street)."""
    out = []
    for rec in state.actions:
        if int(rec.street) != street:
            continue
        if rec.kind == ActionKind.FOLD:
            out.append("f")
        elif rec.kind == ActionKind.CHECK:
            out.append("x")
        elif rec.kind == ActionKind.CALL:
            out.append("c")
        elif rec.is_all_in:
            out.append("a")
        else:
            out.append(("b" if rec.kind == ActionKind.BET else "r") + f"{rec.amount:g}")
    return out


def _amount(label):
    return float(label[1:]) if label[:1] in ("b", "r") else None


def _abstract_children(game, node):
    """The labels of the actions at a node of the blueprint's abstract tree."""
    tree = game.tree
    if tree.kind[node] != 0:
        raise ValueError("not a decision")
    c0 = int(tree.child_start[node])
    return [game.rules.labels[c0 + a] for a in range(int(tree.num_actions[node]))]


def _match(own, theirs):
    """For each subgame label the index of the abstract label of the same action (fold, check
    or call, the sizes in order, all-in), or None when the two decisions differ."""
    def split(labels, passive):
        fold = [i for i, x in enumerate(labels) if x == "f"]
        call = [i for i, x in enumerate(labels) if x in passive]
        allin = [i for i, x in enumerate(labels) if x == "a"]
        sized = [i for i in range(len(labels)) if i not in fold + call + allin]
        return fold, call, sized, allin
    a, b = split(own, ("x", "c")), split(theirs, ("c",))
    if any(len(x) != len(y) for x, y in zip(a, b)):
        return None
    order = [0] * len(own)
    for x, y in zip(a, b):
        for i, j in zip(x, y):
            order[i] = j
    return order


class ResolvingBot:
    """Plays like :class:`BlueprintBot` before ``street`` and solves from there (module
    docstring). ``target``: exploitability to solve to, % of the pot; ``max_iterations`` caps a
    solve; ``menu``: the subgame's bet sizes, one :class:`BetMenu` or {street: BetMenu} by the
    street a solve starts on (default: :data:`TURN_MENU` from the turn, ``BetMenu()`` -- half
    pot, pot, all-in -- on the river); ``min_weight``: combos under this share of their
    range's largest weight are left out; ``cache``: a :class:`SolveCache` shared by bots;
    ``time_limit``: seconds a solve may run (it stops at its first check past them);
    ``progress``: called as ``progress(street, solver)`` when a solve starts, it returns None
    or the ``progress(iterations, exploitability_pct, seconds)`` of
    :meth:`SubgameSolver.solve` for that solve (``play`` shows a solve's progress with it)."""

    def __init__(self, bp, big_blind, rng, street=RIVER, target=0.5, max_iterations=300,
                 menu=None, threads=1, min_weight=1e-3, safe=False, safe_values="average",
                 cache=None, time_limit=None, progress=None):
        self.blueprint = BlueprintBot(bp, big_blind, rng)
        self.bp, self.big_blind, self.rng = bp, big_blind, rng
        self.street = STREETS.get(street, street)
        self.target, self.max_iterations = target, max_iterations
        self.time_limit, self.progress = time_limit, progress
        if menu is None and safe and self.street in (TURN, RIVER):
            from holdem.subgame.blueprint import blueprint_menu

            menu = blueprint_menu(bp, self.street)
        if menu is None:
            menu = {TURN: TURN_MENU, RIVER: BetMenu()}
        self.menu = menu if isinstance(menu, dict) else {TURN: menu, RIVER: menu}
        self.cache = cache
        self.safe, self.safe_values = safe, safe_values
        self.gadgets = 0                 # streets solved with the safe gadget
        self.threads, self.min_weight = threads, min_weight
        self.solves = 0                  # subgames solved so far (re-solves included)
        self.reused = 0                  # subgames read from the cache instead
        self._hand = None
        self._node_policies = OrderedDict()   # (labels, board) -> the blueprint's (see below)
        self._game = None                # (street, solver, extra sizes) of the current street
        self._values = {}                # street -> the opponent's blueprint values (safe)

    # -- ranges ---------------------------------------------------------------------------

    def _blueprint_ranges(self, state, street):
        """(oop, ip) float64[1326] ranges at the start of ``street`` from the blueprint, or
        None when the abstract line does not reach a decision there."""
        prefix = [a for a, rec in zip(real_line(state), state.actions) if int(rec.street) < street]
        try:
            labels, _ = self.bp.translate_line(
                prefix, self.big_blind, rng=self.blueprint.draws(), stacks=state.config.stacks)
            node_range = self.bp.range(labels, state.board[:street + 2])
        except ValueError:
            return None
        self._start_labels = list(labels)
        return subgame_ranges(node_range)

    def _solution_ranges(self, previous, state, street):
        """Ranges at the start of ``street`` from the previous street's solution: each player's
        range times its solved strategy along the real line of that street."""
        solver = previous
        line = street_labels(state, street - 1)
        river_card = state.board[4]
        ranges = [solver.spot.ranges[p].copy() for p in (0, 1)]
        node = 0
        tree = solver.tree
        for label in line:
            labels = tree.child_labels(node)
            if label not in labels:
                return None
            p = int(tree.player[node])
            ranges[p] *= solver.strategy(node)[labels.index(label)]
            node = int(tree.first_child[node]) + labels.index(label)
        if tree.kind[node] == CHANCE:
            dead = (COMBOS == river_card).any(axis=1)
            for r in ranges:
                r[dead] = 0.0
        return ranges

    def _trim(self, ranges, state):
        """Drop the combos whose weight is under ``min_weight`` of their range's largest (they
        barely move the solution and cost as much as any other), keeping the bot's own combo
        (which the solution must give a strategy)."""
        out = []
        for r in ranges:
            r = r.copy()
            r[r < self.min_weight * r.max()] = 0.0
            out.append(r)
        me = 0 if state.to_act == 1 else 1           # the bot: its subgame player
        combo = combo_index(*state.hole_cards[state.to_act])
        if out[me][combo] == 0:
            out[me][combo] = max(ranges[me][combo], self.min_weight * ranges[me].max())
        return out

    @staticmethod
    def _opponent(state):
        """The subgame player of the bot's opponent (the bot is the seat to act)."""
        return 1 if state.to_act == 1 else 0

    def _blueprint_values(self, state, street, ranges):
        """The opponent's counterfactual values at the street's start (float64[1326]) under
        the blueprint, on the subgame tree (which is the blueprint's own tree on this street:
        same sizes and cap): with ``safe_values`` "average" both play the blueprint's strategy
        (the values the blueprint gives each hand; DeepStack's re-solving takes the values of
        its previous solution the same way); with "best_response" the opponent best-responds
        to the bot's blueprint strategy (the guarantee of safe subgame solving, but a bound so
        loose that nearly every hand takes it and the re-solved strategy learns little: it
        lost 104 ± 86 mbb/hand to the blueprint alone). None where the two trees do not match
        (the bot then re-solves unsafely)."""
        bp, game = self.bp, self.bp.game
        solver = SubgameSolver(self._spot(state, street, ranges, {}))
        tree = solver.tree
        me = 1 - self._opponent(state)
        board = state.board[:street + 2]
        players = (me,) if self.safe_values == "best_response" else (0, 1)
        for node in np.flatnonzero((tree.kind == 0) & np.isin(tree.player, players)):
            labels = list(self._start_labels)
            path = list(tree.line(int(node))) + [None]
            at = 0
            try:
                for label in path:
                    own = tree.child_labels(at)
                    theirs = _abstract_children(game, bp.node_of(labels))
                    order = _match(own, theirs)
                    if order is None:
                        return None
                    if label is None:
                        break
                    labels.append(theirs[order[own.index(label)]])
                    at = int(tree.first_child[at]) + own.index(label)
                node_range = bp.range(labels, board)
            except (ValueError, KeyError):
                return None
            probs = np.zeros((len(own), len(COMBOS)))
            rows = [combo_index(a, b) for a, b in node_range.combos.tolist()]
            for i, j in enumerate(order):
                probs[i, rows] = node_range.mix[:, j]
            solver.load_strategy(int(node), probs)
        self.gadgets += 1
        return solver.counterfactual_values(self._opponent(state), self.safe_values)

    # -- solving --------------------------------------------------------------------------

    def _spot(self, state, street, ranges, extra):
        pot = state.pot_total - sum(state.street_commitments)
        stack = min(s + c for s, c in zip(state.stacks, state.street_commitments))
        return Spot.make(state.board[:street + 2], ranges[0], ranges[1], pot=pot, stack=stack,
                         menu=self.menu[street], extra=extra)

    def _solve(self, state, street, ranges, extra):
        spot = self._spot(state, street, ranges, extra)
        values = self._values.get(street)
        key = None
        if self.cache is not None:
            key = (tuple(spot.board), spot.pot, spot.stack, spot.ranges[0].tobytes(),
                   spot.ranges[1].tobytes(), repr(spot.menu),
                   tuple(sorted((k, tuple(sorted(v))) for k, v in extra.items())),
                   None if values is None else (self._opponent(state), values.tobytes()),
                   self.target, self.max_iterations, self.time_limit)
            solver = self.cache.get(key)
            if solver is not None:
                self.reused += 1
                return solver
        solver = SubgameSolver(spot, threads=self.threads)
        if values is not None:
            solver.set_gadget(self._opponent(state), values)
        report = None if self.progress is None else self.progress(street, solver)
        solver.solve(target=self.target, max_iterations=self.max_iterations,
                     time_limit=self.time_limit, progress=report)
        solver.close()
        self.solves += 1
        if key is not None:
            self.cache.put(key, solver)
        return solver

    def _street_game(self, state, keep=True):
        """The solver of the current street (solving or re-solving it when needed), or None
        where the bot falls back to the blueprint. ``keep`` False: ``state`` is a look-ahead
        (a best response trying a size on a copy of the hand); a re-solve for a size it adds
        is returned but not kept, so the bot answers the real line later with the sizes the
        real hand put on its tree, as it would have without the look-ahead (kept, every size
        a best response tried stayed on the tree, which grew with each and answered the real
        bet differently from what the look-ahead had read)."""
        street = int(state.street)
        hand = (state.hole_cards, state.full_board)      # copies of a hand are the same hand
        if hand != self._hand:
            self._hand, self._game, self._ranges, self._values = hand, None, {}, {}
        if self._game is None or self._game[0] != street:
            previous = self._game[1] if self._game and self._game[0] == street - 1 else None
            ranges = (self._solution_ranges(previous, state, street)
                      if previous is not None else None)
            if ranges is None:      # the first solved street, or the one before fell back
                ranges = self._blueprint_ranges(state, street)
            if ranges is None or not all(r.any() for r in ranges):
                self._game = (street, None, {})
                return None
            ranges = self._trim(ranges, state)
            self._ranges[street] = ranges
            self._values[street] = (self._blueprint_values(state, street, ranges)
                                    if self.safe and street == self.street else None)
            self._game = (street, self._solve(state, street, ranges, {}), {})
        street_, solver, extra = self._game
        if solver is None:
            return None
        line = street_labels(state, street)
        try:
            solver.tree.find(tuple(line))
        except KeyError:
            extra = {k: set(v) for k, v in extra.items()}
            for i, label in enumerate(line):      # every real size the tree lacks
                if _amount(label) is not None:
                    extra.setdefault(tuple(line[:i]), set()).add(_amount(label))
            try:
                solver = self._solve(state, street, self._ranges[street], extra)
                solver.tree.find(tuple(line))
            except (KeyError, ValueError):
                if keep:
                    self._game = (street, None, {})
                return None
            if keep:
                self._game = (street, solver, extra)
        return solver

    def translate(self, state, hand=None):
        """The blueprint's reading of the hand (:meth:`BlueprintBot.translate`)."""
        return self.blueprint.translate(state, hand)

    def reading(self, state):
        """How the bot reads the last bet: the blueprint's translation before the re-solved
        streets; None from there (the subgame holds the real size)."""
        if int(state.street) >= self.street:
            return None
        return self.blueprint.reading(state)

    def _blueprint_policy(self, state, hand=None):
        """(labels, actions, probs) of the blueprint for every combo (see :meth:`policy`)."""
        bp, tree = self.bp, self.bp.game.tree
        me, legal = state.to_act, state.legal_actions()
        try:
            labels, _ = self.blueprint.translate(state, hand)
            node = bp.node_of(labels)
            if (tree.kind[node] != 0 or tree.player[node] != me
                    or tree.street[node] != int(state.street)):
                raise ValueError("off the tree")
            names, probs, fraction = self._node_policy(labels, state.board)
        except ValueError:
            return ["c"], [bot_action("c", legal)], np.ones((1, len(COMBOS)))
        actions = [bot_action(label, legal, real_raise_to(fraction.get(label, 0.0), label, state))
                   for label in names]
        return list(names), actions, probs.copy()

    def _node_policy(self, labels, board):
        """(action labels, float64[num_actions, 1326] probabilities, {label: pot fraction}) of
        the blueprint at the abstract node after ``labels`` with ``board``: the part of
        :meth:`_blueprint_policy` that depends on nothing else, kept for the last 256 nodes (a
        best response trying 56 sizes on the turn reads most of them as a few abstract sizes,
        and the node's range was computed again for each)."""
        key = (tuple(labels), tuple(board))
        hit = self._node_policies.get(key)
        if hit is not None:
            self._node_policies.move_to_end(key)
            return hit
        bp = self.bp
        node_range = bp.range(labels, board)
        fraction = {label: f for f, label in bp.raise_fractions(labels)}
        probs = np.zeros((len(node_range.actions), len(COMBOS)))
        index = [combo_index(a, b) for a, b in node_range.combos.tolist()]
        probs[:, index] = node_range.mix.T
        self._node_policies[key] = out = (tuple(node_range.actions), probs, fraction)
        if len(self._node_policies) > 256:
            self._node_policies.popitem(last=False)
        return out

    def policy(self, state, hand=None):
        """What the seat to act of ``state`` does with every combo: (labels, real actions,
        float64[num_actions, 1326] probabilities), from the blueprint before the re-solved
        streets and from the solution after (solving when needed). What a best response to the
        bot (:mod:`holdem.subgame.lbr`) reads; :meth:`decide` samples its own combo's column.
        ``hand``: the real hand that ``state`` is a copy of (:meth:`BlueprintBot.translate`)."""
        if int(state.street) < self.street:
            return self._blueprint_policy(state, hand)
        try:
            self.blueprint.translate(state, hand)   # keeps the hand's translation seed
        except ValueError:
            pass                                    # the real line left the blueprint's tree
        solver = self._street_game(state, keep=hand is None or hand is state)
        if solver is None:
            return self._blueprint_policy(state, hand)
        line = tuple(street_labels(state, int(state.street)))
        node = solver.tree.find(line)
        labels = solver.tree.child_labels(node)
        legal = state.legal_actions()
        actions = []
        for label in labels:
            raise_to = _amount(label)       # chips in on the street: the real "raise to"
            kind = "c" if label in ("x", "c") else label[0] if label in ("f", "a") else "r"
            actions.append(bot_action(kind, legal, 0 if raise_to is None else round(raise_to)))
        self._last_iterations = solver.iterations
        return list(labels), actions, solver.strategy(node)

    def decide(self, state):
        """The bot's :class:`Decision` for the seat to act of ``state``."""
        if int(state.street) < self.street:
            return self.blueprint.decide(state)
        labels, actions, probs = self.policy(state)
        if len(labels) == 1 and int(state.street) >= self.street and self._game[1] is None:
            decision = self.blueprint.decide(state)
            decision.note = "re-solving: no range to solve from; the blueprint plays"
            return decision
        mix = probs[:, combo_index(*state.hole_cards[state.to_act])]
        if not mix.sum() > 0:
            mix = np.full(len(labels), 1.0 / len(labels))
        index = int(self.rng.choice(len(labels), p=mix / mix.sum()))
        line = street_labels(state, int(state.street))
        return Decision(actions[index], line, dict(zip(labels, mix.tolist())), labels[index],
                        note=f"re-solved ({self._last_iterations} iterations)")
