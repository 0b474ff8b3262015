"""Solve a turn or river spot with exact cards: two ranges, a board, a pot, stacks, a bet menu.

    from holdem.subgame import Spot, SubgameSolver
    spot = Spot.make(board="Td 9d 6h Qc 2s", oop="QQ+,AK", ip="JJ-88,AQs", pot=200, stack=900)
    solver = SubgameSolver(spot)               # the tree is built; nothing big allocated yet
    print(solver.memory_bytes())               # what solve() will allocate
    result = solver.solve(target=0.3)          # % of the pot
    result.exploitability_pct, result.strategy(()), solver.values(0), solver.equity(0)

Lifecycle (as postflop-solver's): the tree is built and the memory estimated when the solver is
made; :meth:`SubgameSolver.allocate` (called by the first :meth:`solve`) commits it; ``solve``
runs discounted CFR (:mod:`holdem.subgame.kernels`) until the exploitability -- measured by a
best response of each player over every combo, separate code from the regrets -- is at most
``target`` % of the pot, or ``max_iterations``.

Player 0 is out of position (first to act on every street). Values are in the spot's chips.
A range is a range string (:mod:`holdem.analysis.ranges.strings`), a {combo: weight} or
{class: weight} dict as ``parse_range`` returns, or 1,326 weights in :data:`COMBOS` order;
combos that touch the board are dropped.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
import numpy as np

from holdem.cards import COMBOS, card_tuple, describe_cards, format_card, repeated_card
from holdem.evaluator.kernels import rank7_batch_kernel
from holdem.subgame import kernels as K
from holdem.subgame.tree import (CHANCE, DECISION, RIVER, TURN, BetMenu, build_tree,
                                  player_menus)

_COMBO_INDEX = {(int(a), int(b)): i for i, (a, b) in enumerate(COMBOS)}

FLOAT = np.float32          # regrets, strategy sums and value vectors (as postflop solvers)


def combo_index(a, b):
    """Index in :data:`COMBOS` of the pair of cards ``a``, ``b``."""
    return _COMBO_INDEX[(min(a, b), max(a, b))]


def range_weights(value, what="range"):
    """float64[1326] weights from a range string, a ``parse_range`` dict or 1,326 numbers."""
    from holdem.analysis.ranges.charts import combos as class_combos
    from holdem.analysis.ranges.strings import parse_range

    if isinstance(value, str):
        value = parse_range(value, combos=True)
    if isinstance(value, dict):
        out = np.zeros(len(COMBOS))
        for key, weight in value.items():
            pairs = class_combos(key) if isinstance(key, str) else [key]
            for a, b in pairs:
                out[combo_index(int(a), int(b))] = weight
    else:
        out = np.asarray(value, dtype=np.float64)
    if out.shape != (len(COMBOS),):
        raise ValueError(f"{what}: expected a range string, a dict or {len(COMBOS)} weights, "
                         f"got an array of shape {out.shape}")
    if not np.all(np.isfinite(out)) or out.min() < 0 or out.max() > 1:
        raise ValueError(f"{what}: weights must be in [0, 1]")
    return out


@dataclass(frozen=True)
class Spot:
    """What a subgame is solved from. ``ranges[p]``: float64[1326] (player 0 out of position);
    ``board``: 4 (turn) or 5 (river) card ints; ``pot`` in the middle; ``stack`` behind each."""

    board: tuple
    ranges: tuple
    pot: float
    stack: float
    menu: tuple                 # (player 0's BetMenu, player 1's)
    extra: dict = None          # {line: sizes} the menu lacks (see tree.build_tree)

    @classmethod
    def make(cls, board, oop, ip, pot, stack, menu=None, extra=None):
        board = card_tuple(board, "board")
        if len(board) not in (4, 5):
            raise ValueError(f"a subgame's board has 4 cards (turn) or 5 (river), got "
                             f"{len(board)}" + (f" ({describe_cards(board)})" if board else ""))
        twice = repeated_card(board)
        if twice:
            raise ValueError(f"{twice} is on the board twice")
        ranges = (range_weights(oop, "oop range"), range_weights(ip, "ip range"))
        dead = np.zeros(52, dtype=bool)
        dead[list(board)] = True
        live = ~(dead[COMBOS[:, 0]] | dead[COMBOS[:, 1]])
        ranges = tuple(np.where(live, r, 0.0) for r in ranges)
        for name, r in zip(("oop", "ip"), ranges):
            if not r.any():
                raise ValueError(f"{name} range: no combo left with weight above 0 on "
                                 f"{describe_cards(board)}")
        if not _has_deal(*ranges):
            raise ValueError(f"no deal: on {describe_cards(board)} every oop combo shares a "
                             f"card with every ip combo")
        if not float(pot) > 0 or not float(stack) >= 0:
            raise ValueError(f"the pot must be above 0 and the stack 0 or more, got pot {pot}, "
                             f"stack {stack}")
        return cls(tuple(board), ranges, float(pot), float(stack), player_menus(menu), extra)

    @property
    def street(self):
        return TURN if len(self.board) == 4 else RIVER


def _has_deal(oop, ip):
    """Whether some combo of ``oop`` and some of ``ip`` (float64[1326] weights) share no card.
    An oop combo {a, b} meets count(a) + count(b) - [{a, b} in ip] of the ip combos, where
    count(c) is the number of ip combos holding card c."""
    held = ip > 0
    count = np.bincount(COMBOS[held].ravel(), minlength=52)
    meets = count[COMBOS[:, 0]] + count[COMBOS[:, 1]] - held
    return bool((meets[oop > 0] < held.sum()).any())


def _strengths(board, cards):
    """int32[n]: the 7-card rank of each hand (cards[n, 2]) with the 5-card ``board``."""
    rows = np.empty((len(cards), 7), dtype=np.int64)
    rows[:, :5] = board
    rows[:, 5:] = cards
    out = np.empty(len(cards), dtype=np.int32)
    rank7_batch_kernel(rows, out)
    return out


class SubgameSolver:
    """See the module docstring. ``threads`` run a turn spot's river subtrees in parallel."""

    def __init__(self, spot, threads=1):
        self.spot, self.threads = spot, max(1, int(threads))
        deck = [c for c in range(52) if c not in spot.board]
        self.river_cards = np.array(deck if spot.street == TURN else [], dtype=np.int64)
        self.tree = build_tree(spot.pot, spot.stack, spot.street, spot.menu,
                               len(self.river_cards), spot.extra)
        self.combos = [np.flatnonzero(r > 0) for r in spot.ranges]
        self.num_hands = np.array([len(c) for c in self.combos], dtype=np.int64)
        self.max_hands = max(1, int(self.num_hands.max()))
        tree = self.tree
        offsets = np.zeros(tree.num_nodes, dtype=np.int64)
        total = 0
        for n in np.flatnonzero(tree.kind == DECISION):
            offsets[n] = total
            total += int(tree.num_children[n]) * int(self.num_hands[tree.player[n]])
        self._offsets, self._store_size = offsets, total
        self.segment_roots = np.array(
            [int(tree.first_child[c]) + k for c in tree.chance_nodes
             for k in range(len(self.river_cards))], dtype=np.int64)
        self.iterations = 0
        self.gadget = None
        self._allocated = False

    # -- memory ---------------------------------------------------------------------------

    def _depth(self):
        depth, stack = 0, [(0, 1)]
        while stack:
            n, d = stack.pop()
            depth = max(depth, d)
            stack.extend((c, d + 1) for c in self.tree.children(n))
        return depth + 1

    def memory_bytes(self):
        """Bytes :meth:`allocate` commits: regrets and strategy sums (float32, one per action,
        decision and hand of the player to act), the turn's chance buffers, the boards' hand
        orders, the hands and each thread's scratch."""
        item, word = np.dtype(FLOAT).itemsize, 8
        h = self.max_hands
        num_boards = 1 + len(self.river_cards) if len(self.river_cards) else 1
        store = 2 * self._store_size * item
        chance = ((max(1, len(self.tree.chance_nodes)) * 2 * h
                   + max(1, len(self.segment_roots)) * h) * item
                  + len(self.river_cards) * word)
        boards = 2 * num_boards * (6 * h + 1) * word
        hands = (2 + 2 * h * 2 + 2 * h) * word
        max_actions = int(self.tree.num_children[self.tree.kind == DECISION].max(initial=1))
        depth = self._depth()
        work = (depth * (2 + 1 + 2 * max_actions) * h + h) * item + (depth * 4 + 52) * word
        return store + chance + boards + hands + work * (1 + self.threads)

    def allocated_bytes(self):
        """Bytes of the arrays :meth:`allocate` made (0 before): what :meth:`memory_bytes`
        estimates, counted."""
        if not self._allocated:
            return 0
        groups = (self.store, self.chance, self.boards, self.hands, *self.works)
        return sum(a.nbytes for g in groups for a in g if isinstance(a, np.ndarray))

    # -- set-up ---------------------------------------------------------------------------

    def _hands(self):
        h = self.max_hands
        cards = np.zeros((2, h, 2), dtype=np.int64)
        same = np.full((2, h), -1, dtype=np.int64)
        for p in range(2):
            cards[p, :self.num_hands[p]] = COMBOS[self.combos[p]]
        for p in range(2):
            where = {int(c): i for i, c in enumerate(self.combos[1 - p])}
            for i, c in enumerate(self.combos[p]):
                same[p, i] = where.get(int(c), -1)
        return K.Hands(self.num_hands.copy(), cards, same)

    def _boards(self, hands):
        board = np.array(self.spot.board, dtype=np.int64)
        variants = ([board] if self.spot.street == RIVER else
                    [None] + [np.append(board, c) for c in self.river_cards])
        shape = (2, len(variants), self.max_hands)
        count = np.zeros(shape[:2], dtype=np.int64)
        order, c0, c1, lo, hi, end = (np.zeros(shape, dtype=np.int64) for _ in range(6))
        for b, full in enumerate(variants):
            if full is None:
                continue
            ranked = []
            for p in range(2):
                cards = hands.cards[p, :self.num_hands[p]]
                valid = np.flatnonzero(~np.isin(cards, full).any(axis=1))
                s = _strengths(full, cards[valid])
                sort = np.argsort(s, kind="stable")
                ranked.append((valid[sort], s[sort]))
            for p in range(2):
                hand, s = ranked[p]
                other = ranked[1 - p][1]
                n = len(hand)
                count[p, b] = n
                order[p, b, :n] = hand
                c0[p, b, :n] = hands.cards[p, hand, 0]
                c1[p, b, :n] = hands.cards[p, hand, 1]
                lo[p, b, :n] = np.searchsorted(other, s, side="left")
                hi[p, b, :n] = np.searchsorted(other, s, side="right")
                end[p, b, :n] = np.searchsorted(s, s, side="right")
        return K.Boards(count, order, c0, c1, lo, hi, end)

    def _work(self, depth, max_actions):
        h = self.max_hands
        return K.Work(np.zeros((depth, 2, h), FLOAT), np.zeros((depth, 2), np.int64),
                      np.zeros((depth, h), FLOAT), np.zeros((depth, max_actions, h), FLOAT),
                      np.zeros((depth, max_actions, h), FLOAT), np.zeros(depth, np.int64),
                      np.zeros(depth, np.int64), np.zeros(52, np.float64),
                      np.zeros(h, FLOAT))

    def allocate(self):
        """Commit the memory of :meth:`memory_bytes` (``solve`` calls it)."""
        if self._allocated:
            return
        tree = self.tree
        chance_id = np.full(tree.num_nodes, -1, dtype=np.int64)
        chance_id[tree.chance_nodes] = np.arange(len(tree.chance_nodes))
        self.kt = K.Tree(tree.kind, tree.player, tree.invest, tree.board, tree.first_child,
                         tree.num_children, self._offsets, chance_id, self.spot.pot / 2)
        self.hands = self._hands()
        self.boards = self._boards(self.hands)
        self.store = K.Store(np.zeros(self._store_size, FLOAT),
                             np.zeros(self._store_size, FLOAT))
        depth = self._depth()
        max_actions = int(tree.num_children[tree.kind == DECISION].max(initial=1))
        self.works = [self._work(depth, max_actions) for _ in range(1 + self.threads)]
        h = self.max_hands
        num_cards = len(self.river_cards)
        self.chance = K.Chance(np.zeros((max(1, len(tree.chance_nodes)), 2, h), FLOAT),
                               np.zeros((max(1, len(self.segment_roots)), h), FLOAT),
                               self.river_cards,
                               1.0 / (num_cards - 4) if num_cards else 1.0)
        self.init_reach = np.zeros((2, h), dtype=FLOAT)
        for p in range(2):
            self.init_reach[p, :self.num_hands[p]] = self.spot.ranges[p][self.combos[p]]
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self._allocated = True

    # -- traversals -----------------------------------------------------------------------

    def _root_reach(self, trav, mode):
        """The root's reach: the ranges, the gadget player's times its chance of entering."""
        reach = self.init_reach
        gadget = self.gadget
        if gadget is not None and (mode == K.CFR or trav != gadget.player):
            reach = reach.copy()
            n = self.num_hands[gadget.player]
            reach[gadget.player, :n] *= gadget.enter(mode == K.CFR)
        return reach

    def _traverse(self, trav, mode, t=1, node=0, reach=None):
        """Values per hand of ``trav`` (float64[n]) at ``node`` (the root by default), after one
        traversal from ``reach`` there (float[2, H]; by default the root's)."""
        args = (self.kt, self.hands, self.boards, self.store)
        main = self.works[0]
        start = self._root_reach(trav, mode) if reach is None else reach
        main.reach[0] = start
        if len(self.segment_roots) and self.tree.segment[node] < 0:
            K.traverse(*args, main, self.chance, node, trav, mode, K.CHANCE_RECORD, True, t)
            step = self.threads
            if self._pool is None:
                K.traverse_segments(*args, self.works[1], self.chance, self.segment_roots, 0,
                                    1, trav, mode, t)
            else:
                jobs = [self._pool.submit(K.traverse_segments, *args, self.works[1 + i],
                                          self.chance, self.segment_roots, i, step, trav,
                                          mode, t) for i in range(step)]
                for job in jobs:
                    job.result()
            main.reach[0] = start
        K.traverse(*args, main, self.chance, node, trav, mode, K.CHANCE_READ, False, t)
        return main.cfv[0, :self.num_hands[trav]].astype(np.float64)

    def _pairs(self):
        """Sum over deals (two disjoint hands) of the product of the two ranges' weights."""
        r0, r1 = (self.init_reach[p, :self.num_hands[p]].astype(np.float64) for p in (0, 1))
        return float(r0 @ self._disjoint(0, r1))

    def _disjoint(self, player, opp_reach):
        """Per hand of ``player``: the other player's weight over hands sharing no card."""
        out = np.zeros(self.max_hands, dtype=np.float64)
        reach = np.zeros(self.max_hands, dtype=FLOAT)
        reach[:len(opp_reach)] = opp_reach
        K._fold_values(self.hands, player, reach, 1.0, self.works[0], out)
        return out[:self.num_hands[player]]

    def iterate(self, num=1):
        """``num`` iterations of discounted CFR (one traversal per player each)."""
        self.allocate()
        for _ in range(num):
            self.iterations += 1
            for trav in (0, 1):
                values = self._traverse(trav, K.CFR, self.iterations)
                if self.gadget is not None and trav == self.gadget.player:
                    n = self.num_hands[trav]
                    self.gadget.update(values, self.init_reach[trav, :n], self.iterations)

    def best_response_values(self):
        """(value of player 0's best response, of player 1's) against the other's average
        strategy, in chips per deal. With a gadget (:meth:`set_gadget`) these are the gadget
        game's: its player takes, per hand, the better of its blueprint value and entering;
        the other faces the range that enters and pays the values of the hands that do not."""
        self.allocate()
        pairs = self._pairs()
        out = []
        gadget = self.gadget
        for p in (0, 1):
            v = self._traverse(p, K.BEST_RESPONSE)
            reach = self.init_reach[p, :self.num_hands[p]].astype(np.float64)
            if gadget is not None and p == gadget.player:
                v = np.maximum(v, gadget.values)
            total = float(reach @ v)
            if gadget is not None and p != gadget.player:
                q = gadget.player
                held = self.init_reach[q, :self.num_hands[q]].astype(np.float64)
                total -= float(held @ ((1 - gadget.enter(False)) * gadget.values))
            out.append(total / pairs)
        return tuple(out)

    def set_gadget(self, player, values):
        """Solve safely for the other player (the re-solve gadget of Burch, Johanson & Bowling
        2014): at the root ``player`` chooses, per hand, to enter the subgame or to take
        ``values`` (float64[1326]: its counterfactual values from the blueprint, in the units of
        this solver's values, e.g. :meth:`counterfactual_values` of a solver holding the
        blueprint's strategy). The solution then gives no hand of ``player`` more than its
        blueprint value (up to the exploitability)."""
        self.allocate()
        self.gadget = _Gadget(player, np.asarray(values, dtype=np.float64)[self.combos[player]])

    def counterfactual_values(self, player, mode="best_response"):
        """float64[1326]: ``player``'s value per combo at the root, summed over the other's
        range (the units of :meth:`set_gadget`), against the other's average strategy: its
        best response ("best_response") or its own average strategy ("average")."""
        self.allocate()
        kind = {"best_response": K.BEST_RESPONSE, "average": K.AVERAGE}[mode]
        out = np.zeros(len(COMBOS))
        out[self.combos[player]] = self._traverse(player, kind)
        return out

    def load_strategy(self, node, probs):
        """Set the average strategy at decision ``node`` to ``probs`` (float64[num_actions,
        1326], per combo of the player to act): a fixed strategy, e.g. the blueprint's, for
        :meth:`counterfactual_values`."""
        self.allocate()
        q, na = int(self.tree.player[node]), int(self.tree.num_children[node])
        n = int(self.num_hands[q])
        rows = np.asarray(probs, dtype=np.float64)[:, self.combos[q]]
        off = self._offsets[node]
        self.store.strategy_sum[off:off + na * n] = rows.reshape(-1)

    def exploitability(self):
        """NashConv / 2 of the average strategies, in chips per deal (zero-sum payoffs:
        each player stakes half the pot)."""
        br0, br1 = self.best_response_values()
        return (br0 + br1) / 2

    def solve(self, target=0.3, max_iterations=1000, check_every=10, time_limit=None,
              progress=None):
        """Iterate until the exploitability is at most ``target`` % of the pot (checked every
        ``check_every`` iterations), ``max_iterations`` or ``time_limit`` seconds. Calls
        ``progress(iterations, exploitability_pct, seconds)`` at each check. Returns a
        :class:`Solution`."""
        self.allocate()
        start = time.perf_counter()
        expl = None
        while self.iterations < max_iterations:
            self.iterate(min(check_every, max_iterations - self.iterations))
            expl = self.exploitability() / self.spot.pot * 100
            elapsed = time.perf_counter() - start
            if progress is not None:
                progress(self.iterations, expl, elapsed)
            if expl <= target or (time_limit is not None and elapsed >= time_limit):
                break
        if expl is None:
            expl = self.exploitability() / self.spot.pot * 100
        return Solution(self, expl, time.perf_counter() - start)

    # -- results --------------------------------------------------------------------------

    def strategy(self, node):
        """float64[num_actions, 1326]: the average strategy at decision ``node`` per combo of
        the player to act (0 for combos it does not hold)."""
        self.allocate()
        tree = self.tree
        if tree.kind[node] != DECISION:
            raise ValueError(f"node {node} ({' '.join(tree.line(node)) or 'root'}) is not a "
                             "decision")
        q, na = int(tree.player[node]), int(tree.num_children[node])
        n = int(self.num_hands[q])
        out = np.zeros((na, n), dtype=FLOAT)
        K._normalized(self.store.strategy_sum, self._offsets[node], na, n, out,
                      np.zeros(n, FLOAT), False)
        full = np.zeros((na, len(COMBOS)))
        full[:, self.combos[q]] = out
        return full

    def values(self, player):
        """float64[1326]: each combo's EV when both play the average strategy: its expected
        share of the final pot minus what it puts in after the root (0 outside the range)."""
        self.allocate()
        v = self._traverse(player, K.AVERAGE)
        opp = self.init_reach[1 - player, :self.num_hands[1 - player]].astype(np.float64)
        mass = self._disjoint(player, opp)
        out = np.zeros(len(COMBOS))
        with np.errstate(invalid="ignore", divide="ignore"):
            ev = np.where(mass > 0, v / mass + self.spot.pot / 2, np.nan)
        out[self.combos[player]] = ev
        return out

    def equity(self, player):
        """float64[1326]: each combo's showdown equity against the other range (ties half),
        over every river (turn spots)."""
        self.allocate()
        opp = 1 - player
        boards = range(1, len(self.river_cards) + 1) if len(self.river_cards) else [0]
        _, equity = self.against(player, self.init_reach[opp, :self.num_hands[opp]], boards)
        result = np.full(len(COMBOS), np.nan)
        result[self.combos[player]] = equity
        return result

    # -- the numbers at any node (what a study of the solution reads) -------------------------

    def reach_at(self, node):
        """float64[2, H]: each player's reach per hand at ``node``, both on their average
        strategies from the ranges (0 for hands holding a river card dealt on the way)."""
        self.allocate()
        tree = self.tree
        path = []
        while node > 0:
            path.append(node)
            node = int(tree.parent[node])
        reach = self.init_reach.astype(np.float64)
        parent = 0
        for child in path[::-1]:
            k = child - int(tree.first_child[parent])
            if tree.kind[parent] == DECISION:
                q = int(tree.player[parent])
                n = int(self.num_hands[q])
                reach[q, :n] *= self.strategy(parent)[k, self.combos[q]]
            elif tree.kind[parent] == CHANCE:
                card = self.river_cards[k]
                for p in (0, 1):
                    reach[p, (self.hands.cards[p] == card).any(axis=1)] = 0.0
            parent = child
        return reach

    def node_values(self, node, player, reach):
        """float64[n]: counterfactual values per hand of ``player`` at ``node`` from ``reach``
        there (:meth:`reach_at`), both players on their average strategies."""
        self.allocate()
        return self._traverse(player, K.AVERAGE, node=node, reach=reach.astype(FLOAT))

    def against(self, player, opp_reach, boards):
        """(mass, equity), float64[n] per hand of ``player``, against the other's reach per
        hand ``opp_reach``: the other's reach over the hands sharing no card with it, and its
        showdown equity (ties half) over ``boards`` (board indices: 0 = the root's, 1 + k = the
        turn plus river card k)."""
        self.allocate()
        opp = 1 - player
        reach = np.zeros(self.max_hands, dtype=FLOAT)
        reach[:self.num_hands[opp]] = opp_reach[:self.num_hands[opp]]
        n = int(self.num_hands[player])
        out = np.zeros(self.max_hands, dtype=np.float64)
        work, cards = self.works[0], self.hands.cards
        K._fold_values(self.hands, player, reach, 1.0, work, out)
        mass = out[:n].copy()
        diff, total = np.zeros(n), np.zeros(n)
        for b in boards:
            masked = reach.copy()
            mine_out = np.zeros(n, dtype=bool)
            if b > 0:
                card = self.river_cards[b - 1]
                masked[(cards[opp] == card).any(axis=1)] = 0.0
                mine_out = (cards[player, :n] == card).any(axis=1)
            K._showdown_values(self.hands, self.boards, b, player, masked, 1.0, work, out)
            diff += np.where(mine_out, 0.0, out[:n])
            K._fold_values(self.hands, player, masked, 1.0, work, out)
            total += np.where(mine_out, 0.0, out[:n])
        with np.errstate(invalid="ignore", divide="ignore"):
            equity = np.where(total > 0, (total + diff) / (2 * total), np.nan)
        return mass, equity

    def close(self):
        if getattr(self, "_pool", None) is not None:
            self._pool.shutdown()
            self._pool = None


class _Gadget:
    """The re-solve gadget's per-hand choice (enter, take the blueprint value), trained by
    discounted CFR like the tree's decisions."""

    def __init__(self, player, values):
        self.player, self.values = player, values
        self.regrets = np.zeros((2, len(values)))
        self.strategy_sum = np.zeros((2, len(values)))

    def enter(self, current):
        """Per hand, the probability of entering: the current strategy or the average."""
        if current:
            pos = np.maximum(self.regrets, 0)
            total = pos.sum(axis=0)
            return np.where(total > 0, pos[0] / np.where(total > 0, total, 1), 0.5)
        total = self.strategy_sum.sum(axis=0)
        return np.where(total > 0, self.strategy_sum[0] / np.where(total > 0, total, 1), 0.5)

    def update(self, entered, reach, t):
        enter = self.enter(True)
        sigma = np.stack([enter, 1 - enter])
        values = np.stack([entered, self.values])
        mean = (sigma * values).sum(axis=0)
        tf = float(t - 1)
        self.regrets *= np.where(self.regrets > 0, tf ** 1.5 / (tf ** 1.5 + 1), 0.5)
        self.regrets += values - mean
        self.strategy_sum *= (tf / (tf + 1)) ** 2
        self.strategy_sum += reach * sigma


@dataclass
class Solution:
    """A solved spot: ``solver`` holds the arrays; ``exploitability_pct`` of the pot."""

    solver: SubgameSolver
    exploitability_pct: float
    seconds: float

    @property
    def iterations(self):
        return self.solver.iterations

    @property
    def exploitability(self):
        return self.exploitability_pct * self.solver.spot.pot / 100

    def strategy(self, line=(), river_card=None):
        """The average strategy after ``line`` (labels; see :mod:`holdem.subgame.tree`):
        (labels, float64[num_actions, 1326])."""
        tree = self.solver.tree
        k = None
        if river_card is not None:
            found = np.flatnonzero(self.solver.river_cards == river_card)
            if not len(found):
                raise ValueError(f"river card {river_card}: not a card this spot deals on the "
                                 "river (a river spot deals none; a board card cannot come)")
            k = int(found[0])
        node = tree.find(tuple(line), k)
        return tree.child_labels(node), self.solver.strategy(node)


def combo_names(indices):
    """Text of combos by :data:`COMBOS` index, higher card first (``"AsKh"``)."""
    return [format_card(COMBOS[i, 1]) + format_card(COMBOS[i, 0]) for i in indices]


__all__ = ["BetMenu", "COMBOS", "CHANCE", "Solution", "Spot", "SubgameSolver", "combo_index",
           "combo_names", "range_weights"]
