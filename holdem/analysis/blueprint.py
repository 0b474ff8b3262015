"""Loading a checkpoint's strategies for analysis (read-only)."""

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from holdem import checkpoint as ckpt
from holdem.analysis.strategy import average_profile, current_profile
from holdem.cards import card_tuple, describe_cards, format_card, repeated_card
from holdem.games import CARDS, EXACT, LINES
from holdem.games.checkpointed import game_of_checkpoint


@dataclass
class LoadedProfile:
    path: Path
    game: object
    config: object
    iterations: int
    average: np.ndarray        # float64[num_keys, max_actions]
    current: np.ndarray
    visited: np.ndarray        # bool[num_keys]


def _load(path):
    checkpoint = path if isinstance(path, ckpt.Checkpoint) else ckpt.load(ckpt.resolve(path))
    game, config = game_of_checkpoint(checkpoint)
    return game, config, ckpt.store_from_checkpoint(checkpoint, game), checkpoint


def load_checkpoint_store(path):
    """(game, store, checkpoint) of a checkpoint file or logdir (or an already loaded
    :class:`holdem.checkpoint.Checkpoint`)."""
    game, _, store, checkpoint = _load(path)
    return game, store, checkpoint


def load_profile(path):
    """Average and current strategy of a small-game checkpoint (file, logdir or Checkpoint)."""
    game, config, store, checkpoint = _load(path)
    if not game.supports(EXACT):
        raise ckpt.CheckpointError(f"checkpoint {checkpoint.path}: game: dense strategy "
                                   f"profiles are for Kuhn and Leduc, not {game.name!r}")
    rows = store.used()
    average, visited = average_profile(game, rows)
    current, _ = current_profile(game, rows)
    return LoadedProfile(path=checkpoint.path, game=game, config=config,
                         iterations=checkpoint.iterations, average=average, current=current,
                         visited=visited)


STREETS = ("preflop", "flop", "turn", "river")


def action_meaning(label, to, bet, commit, big_blind):
    """What abstract action ``label`` does at a decision, in words: 'fold', 'check', 'call 1.5
    bb', 'bet 3 bb', 'raise to 7.5 bb', 'all-in: raise to 100 bb'. ``to``: the street
    commitment after the action; ``bet``: the street's highest commitment before it;
    ``commit``: the actor's; all in chips, ``big_blind`` chips to a big blind."""
    def bb(chips):
        return f"{chips / big_blind:g} bb"

    if label == "f":
        return "fold"
    if label == "c":
        return "check" if to == commit else f"call {bb(to - commit)}"
    text = f"bet {bb(to)}" if bet == 0 else f"raise to {bb(to)}"
    return f"all-in: {text}" if label == "a" else text


class Translation(NamedTuple):
    """How :meth:`Blueprint.translate_line` read one real bet or raise."""

    fraction: float         # its size: chips added beyond a call, as a fraction of the real pot
    label: str              # the abstract action it was read as
    probability: float      # the probability of that reading
    options: tuple          # ((label, pot fraction, probability), ...): the one or two readings
    bots_size: bool = False     # the size is the one the bot makes for ``label`` on the real pot

    @property
    def is_exact(self):
        """The size is an abstract size (read as it with certainty)."""
        return len(self.options) == 1 and (self.bots_size or math.isclose(
            self.fraction, self.options[0][1], rel_tol=1e-9, abs_tol=1e-9))


AVERAGE = "average strategy"
CURRENT = "current (regret matching) strategy"


def strategy_name(street, average, average_max_street, street_names=None, first_street=None):
    """Which strategy a view shows at a decision on ``street``, in words: ``"average
    strategy"``, ``"current (regret matching) strategy"`` (``average=False``), or past
    ``average_max_street`` (``solver.average_max_street``: training kept no strategy sums
    there) the current strategy with that reason. ``first_street``: a view of a whole line or
    of several streets from that street on (a range, an export) names both where they
    differ."""
    if not average:
        return CURRENT
    if street <= average_max_street:
        return AVERAGE
    where = (street_names[average_max_street] if street_names
             else f"street {average_max_street}")
    current = (f"current strategy (regret matching; solver.average_max_street: "
               f"{average_max_street} keeps no average after the {where})")
    if first_street is not None and first_street <= average_max_street:
        return f"average strategy up to the {where}, then {current}"
    return current


# Export histories (``history_string``): f, c or r<big blinds>, streets separated by "/".
_HISTORY_TOKEN_RE = re.compile(r"[fc]|r\d+(?:\.\d+)?")
_HISTORY_RE = re.compile(r"(?:[fc/]|r\d+(?:\.\d+)?)+")


@dataclass(frozen=True)
class Spot:
    """One No-Limit Hold'em decision of a blueprint (:meth:`Blueprint.spot`); amounts in big
    blinds."""

    line: tuple             # the abstract labels so far
    player: int             # the seat to act: 0 = small blind, 1 = big blind, 2 = UTG, ...
    seat: str               # its name: 'small blind (button)', 'big blind', 'UTG', ..., 'button'
    street: int             # 0 = preflop .. 3 = river
    hole: tuple             # the player's two cards, as text ('As', 'Kd')
    board: tuple            # the board dealt so far, as text
    bucket: int             # the player's card bucket on this street
    num_buckets: int        # buckets on this street
    hands: tuple            # preflop: the hand classes in the bucket ('AKs', ...); else ()
    pot: float              # chips in the middle before this decision
    to_call: float
    labels: tuple           # the actions, in tree order
    meanings: tuple         # what each does here ('check', 'call 1.5 bb', 'raise to 7.5 bb', ...)
    strategy: np.ndarray    # float64: the probability of each action
    key: int                # the infoset key
    visited: bool           # False: training never reached this infoset (the strategy is uniform)
    strategy_name: str = AVERAGE   # which strategy it is (:meth:`Blueprint.strategy_name`)


class Blueprint:
    """A trained strategy, read-only: ``Blueprint.load(path)`` (checkpoint file or logdir).

    The checkpoint's arrays are memory-mapped (nothing is copied but the sorted key index), so
    opening costs one pass over the file for its checksums plus a sort of the keys. Strategies are
    looked up by infoset key (``history * bucket_stride + bucket``) or, for heads-up No-Limit
    Hold'em, by a line of abstract action labels and the cards (:meth:`query`).
    """

    def __init__(self, checkpoint, game, config):
        self.checkpoint = checkpoint
        self.game = game
        self.config = config
        arrays = checkpoint.arrays
        self._keys = arrays["keys"]
        self._num_actions = arrays["num_actions"]
        self._regrets = arrays["regrets"]
        self._strategy_sum = arrays["strategy_sum"]
        counts = np.asarray(self._num_actions, dtype=np.int64)
        self._offsets = np.cumsum(counts) - counts
        self._order = np.argsort(self._keys, kind="stable")
        self._sorted_keys = np.asarray(self._keys)[self._order]
        self._hands = None

    @classmethod
    def load(cls, path):
        checkpoint = ckpt.load(ckpt.resolve(path), mmap=True)
        game, config = game_of_checkpoint(checkpoint)
        return cls(checkpoint, game, config)

    @property
    def metadata(self):
        """Config, iterations, training seconds, infosets, bucket-file sha256 and versions."""
        h = self.checkpoint.header
        return {"path": str(self.checkpoint.path), "game": self.game.name,
                "config": h["config"], "iterations": int(h["iterations"]),
                "elapsed": float(h.get("elapsed", 0.0)), "infosets": int(self._keys.shape[0]),
                "buckets_sha256": h.get("abstraction", {}).get("buckets_sha256", ""),
                "versions": h.get("versions", {})}

    @property
    def average_max_street(self):
        """The last street whose average strategy training kept (``solver.average_max_street``;
        every street when the config leaves it unset)."""
        street = self.config.solver.average_max_street
        return self.game.num_streets - 1 if street is None else int(street)

    def keeps_average(self, street):
        """Whether training kept the average strategy (strategy sums) on ``street``."""
        return street <= self.average_max_street

    def strategy_name(self, street, average=True, first_street=None):
        """Which strategy a view shows at a decision on ``street``, in words:
        :func:`strategy_name` with this blueprint's ``solver.average_max_street``."""
        names = self.game.cards.street_names if self.game.supports(CARDS) else None
        return strategy_name(street, average, self.average_max_street, names, first_street)

    def _row(self, key):
        i = int(np.searchsorted(self._sorted_keys, key))
        if i < self._sorted_keys.shape[0] and self._sorted_keys[i] == key:
            return int(self._order[i])
        return -1

    def strategy(self, key, num_actions, average=True):
        """Action probabilities at infoset ``key`` (uniform if it was never visited): the
        normalized average strategy, or with ``average=False`` the current (regret-matching)
        strategy. A street past ``solver.average_max_street`` has no average (its strategy sums
        are zero, so the average reads uniform): :meth:`spot`, :meth:`query` and the views
        show the current strategy there and say so (:meth:`strategy_name`)."""
        row = self._row(key)
        if row < 0:
            return np.full(num_actions, 1.0 / num_actions)
        off, na = int(self._offsets[row]), int(self._num_actions[row])
        values = np.asarray(self._strategy_sum[off:off + na] if average
                            else np.maximum(self._regrets[off:off + na], 0.0), dtype=np.float64)
        total = values.sum()
        return values / total if total > 0 else np.full(na, 1.0 / na)

    # -- heads-up No-Limit Hold'em --------------------------------------------------------
    def node_of(self, labels):
        """The betting-tree node reached by a line of abstract labels (e.g. ``["r2.5b", "c"]``);
        heads-up (the multi-way game has no tree: see :meth:`multiway_node`)."""
        if not self.game.supports(LINES):
            raise ValueError("the multi-way game has no enumerated tree; use multiway_node()")
        from holdem.analysis.ranges.node import walk_line

        return walk_line(self.game, list(labels))[1]

    def multiway_node(self, labels):
        """The node of the multi-way game reached by a line of abstract labels."""
        from holdem.analysis.ranges.node import walk_multiway_line

        return walk_multiway_line(self.game, labels)[1]

    def _decision(self, labels):
        """(player, street, key_of(bucket), [(label, to)], bet, commit, pot) of the decision after
        ``labels`` (No-Limit Hold'em; chips: ``to`` the street commitment after each action,
        ``bet`` the street's highest commitment, ``commit`` the actor's, ``pot`` all chips in)."""
        if not self.game.supports(CARDS):
            raise ValueError("spot() and query() are for No-Limit Hold'em; use strategy(key, ...)")
        if not self.game.supports(LINES):
            node = self.multiway_node(labels)
            if node.is_terminal:
                raise ValueError(f"line {labels!r} ends the hand")
            moves = list(zip(node.labels(), (to for _, to in node.actions())))
            return (node.player, node.street, node.infoset_key, moves, node.bet,
                    int(node.commitments[node.player]), int(node.contributions.sum()))
        tree, rules = self.game.tree, self.game.lines
        node = self.node_of(labels)
        if tree.kind[node] != 0:
            raise ValueError(f"line {labels!r} ends the hand")
        player = int(tree.player[node])
        c0, na = int(tree.child_start[node]), int(tree.num_actions[node])
        moves = [(rules.labels[c], int(rules.raise_to[c])) for c in range(c0, c0 + na)]
        bet = dict(moves)["c"]                           # calling matches the street's bet
        commit = bet - int(tree.contrib[node, 1 - player] - tree.contrib[node, player])
        history = int(tree.history[node]) * self.game.bucket_stride
        return (player, int(tree.street[node]), lambda bucket: history + bucket, moves, bet,
                commit, int(tree.contrib[node].sum()))

    def actions_at(self, labels):
        """(player, street, [(label, raise-to in the tree's chips)]) of the decision after the
        line ``labels``; ValueError where the line leaves the game or ends the hand."""
        player, street, _, moves, _, _, _ = self._decision(list(labels))
        return player, street, moves

    def action_meanings(self, labels):
        """{label: what it does, in words ('fold', 'check', 'call 1.5 bb', 'raise to 7.5 bb',
        ...)} for the actions of the decision after ``labels``, in tree order."""
        _, _, _, moves, bet, commit, _ = self._decision(list(labels))
        return dict(zip((label for label, _ in moves), self._meanings(moves, bet, commit)))

    def _meanings(self, moves, bet, commit):
        return tuple(action_meaning(label, to, bet, commit, self._big_blind)
                     for label, to in moves)

    @property
    def _big_blind(self):
        table = self.game.cards.table
        return table.chips(table.big_blind)

    @property
    def _preflop_hands(self):
        from holdem.abstraction.preflop import preflop_hands

        if self._hands is None:
            self._hands = preflop_hands(self.game.deal.tables)
        return self._hands

    def line_labels(self, line):
        """The abstract labels of a betting line given as the CLI takes it: a string of labels
        separated by spaces (``"r2.5b c"``; ``k`` is a check, read as ``c``), an export
        history (``"r2.5c/r1"``: one letter per action, raise-to amounts in big blinds after
        ``r``, streets separated by ``/``), a list of labels, or None / ``""`` for the first
        decision. No-Limit Hold'em."""
        if line is None:
            return []
        if not isinstance(line, str):
            return [str(label) for label in line]
        text = line.strip()
        if not text or any(ch.isspace() for ch in text) or not _HISTORY_RE.fullmatch(text):
            return self._checks_read(text.split(), line)
        labels = []
        for token in _HISTORY_TOKEN_RE.findall(text):
            if token in ("f", "c"):
                labels.append(token)
                continue
            _, _, _, moves, _, _, _ = self._decision(labels)
            big_blind = self._big_blind
            match = [label for label, to in moves
                     if label not in ("f", "c") and f"{to / big_blind:g}" == token[1:]]
            if not match:
                sizes = [f"r{to / big_blind:g}" for label, to in moves if label not in ("f", "c")]
                raise ValueError(f"line {line!r}: no raise to {token[1:]} big blinds after "
                                 f"{' '.join(labels) or 'the start'} (raises here: "
                                 f"{', '.join(sizes) or 'none'})")
            labels.append(match[0])
        return labels

    def _checks_read(self, labels, line):
        """``labels`` with each ``k`` (check, as ``play`` takes it) read as the label ``c``
        where there is nothing to call; a ``k`` facing a bet raises ValueError."""
        out = []
        for label in labels:
            if label == "k":
                _, _, _, _, bet, commit, _ = self._decision(out)
                if commit != bet:
                    raise ValueError(f"line {line!r}: 'k' (check) after "
                                     f"{' '.join(out) or 'the start'}: there is a bet to call "
                                     "('c' calls it, 'f' folds)")
                label = "c"
            out.append(label)
        return out

    def spot(self, labels, hole, board=(), average=True):
        """The decision after the line ``labels`` (see :meth:`line_labels`: labels, or an
        export history) for the player to act holding ``hole`` with ``board`` (the cards dealt
        so far: 0, 3, 4 or 5, as the line's street needs; None = none); cards as text
        (``"As Kd"``) or ints 0..51. Returns a :class:`Spot`."""
        from holdem.abstraction.bucket_tables import lookup_buckets

        labels = self.line_labels(labels)
        hole = card_tuple(hole, "hole")
        board = card_tuple(() if board is None else board, "board")
        if len(hole) != 2:
            raise ValueError(f"hole needs 2 cards, got {describe_cards(hole)}")
        player, street, key_of, moves, bet, commit, pot = self._decision(labels)
        need = (0, 3, 4, 5)[street]
        if len(board) != need:
            raise ValueError(f"line {' '.join(labels) or '(root)'!r} is a {STREETS[street]} "
                             f"decision: the board needs {need} cards, got {len(board)}"
                             + (f" ({describe_cards(board)})" if board else ""))
        twice = repeated_card(hole + board)
        if twice:
            raise ValueError(f"{twice} is dealt twice: hole {describe_cards(hole)}, board "
                             f"{describe_cards(board) if board else '(none)'}")
        filler = [c for c in range(52) if c not in set(hole) | set(board)]
        full_board = (list(board) + filler)[:5]           # later cards do not change the bucket
        tables = self.game.deal.tables
        bucket = int(lookup_buckets(tables, np.array([hole]), np.array(full_board))[0, street])
        key, big_blind = key_of(bucket), self._big_blind
        seat = self.game.cards.engine.seat_name(player, self.game.num_players)
        return Spot(line=tuple(labels), player=player, seat=seat, street=street,
                    hole=tuple(map(format_card, hole)), board=tuple(map(format_card, board)),
                    bucket=bucket, num_buckets=int(tables.num_buckets[street]),
                    hands=self._preflop_hands[bucket] if street == 0 else (),
                    pot=pot / big_blind, to_call=(bet - commit) / big_blind,
                    labels=tuple(label for label, _ in moves),
                    meanings=self._meanings(moves, bet, commit),
                    strategy=self.strategy(key, len(moves),
                                           average and self.keeps_average(street)),
                    key=key, visited=self._row(key) >= 0,
                    strategy_name=self.strategy_name(street, average))

    def range(self, labels=(), board=(), average=True):
        """Every player's range at the decision after ``labels`` with ``board`` (2-6 players):
        a :class:`holdem.analysis.ranges.node.NodeRange` (reach and weight per combo and per class,
        the action mix of the player to act, buckets, the seats still in the hand)."""
        from holdem.analysis.ranges.node import node_range

        return node_range(self, labels, board, average)

    def query(self, labels, hole, board=(), average=True):
        """Strategy of the player to act after ``labels`` (labels as a list or a string, or an
        export history: :meth:`line_labels`) holding ``hole`` (2 cards) with the board cards
        dealt so far (text such as ``"As Kd"``, or ints 0..51; None = none). Returns
        {label: probability}; :meth:`spot` tells more."""
        spot = self.spot(labels, hole, board, average)
        return {label: float(p) for label, p in zip(spot.labels, spot.strategy)}

    def raise_fractions(self, labels):
        """[(pot fraction, label)] of the raises at the decision after ``labels``, ascending:
        each raise's chips beyond a call as a fraction of the pot after calling, in the tree's
        chips (the kernels' ``lbr.raise_fractions``, bit for bit). No-Limit Hold'em."""
        _, _, _, moves, bet, commit, pot = self._decision(list(labels))
        current = float(dict(moves)["c"])
        pot_after_call = float(pot + bet - commit)
        return sorted((float((to - current) / pot_after_call), label)
                      for label, to in moves if label not in ("f", "c"))

    def translate_line(self, actions, big_blind, rng=None, stacks=None):
        """Abstract labels for a real line (any number of seats).

        ``actions`` are (kind, amount) pairs in the real game's chips, kind one of ``fold``,
        ``check``, ``call``, ``bet``, ``raise``, ``allin`` and amount the street commitment after
        a bet/raise ("raise to"); ``big_blind`` the real big blind; ``stacks`` the real stacks
        at the start of the hand (one per seat, or one number for every seat; default the
        game's stack at that big blind). The line is replayed on the real rules, and every bet
        or raise is read on the *real* pot: a size the bot itself makes for an abstract raise
        (:func:`holdem.analysis.bot.real_raise_to`: the raise's pot fraction of the real pot,
        legal) is read as that raise; any other size, as a fraction of the real pot after
        calling, between two abstract fractions is read as the smaller one with the
        pseudo-harmonic probability of Ganzfried & Sandholm (2013), else as the larger; below
        the smallest or above the largest it is read as that size; an all-in maps to ``a``
        where the tree has one. With ``rng`` (a numpy Generator) the reading is drawn with
        those probabilities, one draw per off-tree size in line order, so the same seed reads a
        line and every longer line that starts with it the same way: act on this, since a
        fixed reading is exploitable. Without ``rng`` the likelier size is taken, for display
        only. Returns (labels, [:class:`Translation` per bet, raise or all-in]); ValueError
        where the line leaves the tree or breaks the rules.
        """
        from holdem.abstraction.actions import translate
        from holdem.analysis.bot import real_pot, real_raise_to, real_stack, real_table, replay

        if not self.game.supports(CARDS):
            raise ValueError("translate_line() is for No-Limit Hold'em")
        if stacks is None:
            stacks = real_stack(self, big_blind)
        stacks = tuple(int(s) for s in np.broadcast_to(stacks, self.game.num_players))
        real = self.game.cards.engine.HandState(
            replace(real_table(self, 1, big_blind), stacks=stacks), rng=np.random.default_rng(0))
        labels, notes = [], []
        for kind, amount in actions:
            try:
                _, _, _, moves, _, _, _ = self._decision(labels)
            except ValueError:
                raise ValueError(f"the hand is over before {kind!r}") from None
            children = dict(moves)                          # label -> raise-to (tree chips)
            if kind in ("fold", "check", "call"):
                label = "f" if kind == "fold" else "c"
                if label not in children:
                    raise ValueError(f"{kind!r} is not possible at {'/'.join(labels) or 'root'}")
            elif kind in ("bet", "raise", "allin"):
                raises = self.raise_fractions(labels)
                if not raises:
                    raise ValueError(f"no raise is possible at {'/'.join(labels) or 'root'}")
                if real.is_terminal or real.to_act is None:
                    raise ValueError(f"the real hand is over before {kind!r}")
                amount = (real.legal_actions().max_to if kind == "allin" and amount is None
                          else amount)
                x = float(amount - real.bet_to) / float(real_pot(real))
                exact = [(f, lab) for f, lab in raises if real_raise_to(f, lab, real) == amount]
                if kind == "allin" and raises[-1][1] == "a":
                    options = (("a", raises[-1][0], 1.0),)
                elif exact:
                    options = ((exact[0][1], exact[0][0], 1.0),)
                else:
                    options = tuple((raises[i][1], raises[i][0], p)
                                    for i, p in translate(x, [f for f, _ in raises]))
                if rng is not None and len(options) > 1:
                    pick = 0 if rng.random() < options[0][2] else 1
                else:
                    pick = max(range(len(options)), key=lambda i: options[i][2])
                label = options[pick][0]
                notes.append(Translation(x, label, options[pick][2], options,
                                         bool(exact) or (kind == "allin" and label == "a")))
            else:
                raise ValueError(f"unknown action kind {kind!r}")
            replay(real, kind, amount)
            labels.append(label)
        return labels, notes
