"""A blueprint playing a real No-Limit Hold'em hand (heads-up, or any seat of a 3-6 player
table): the bot behind :mod:`holdem.cli.play` (``python -m holdem.cli.play --checkpoint PATH``).

The real hand runs on the game's exact rules engine (``game.cards.engine``, a
:class:`holdem.games.interface.HandEngine`; integer chips). Before each bot decision the real action
history (:func:`real_line`) is mapped onto the abstract betting tree with
:meth:`Blueprint.translate_line`: a size between two abstract sizes is read as one of them at random
with the pseudo-harmonic probabilities, drawn once per hand (a fixed reading is exploitable). The
bot samples an abstract action from the blueprint and :func:`bot_action` turns it back into a legal
real action: a raise is its abstract pot fraction of the real pot (:func:`real_raise_to`), so the
bot bets what its tree means however the real pot has drifted from the abstract one. Where the real
hand has left the tree (more raises than the tree allows, a street the abstract hand never reaches)
the bot checks or calls.
"""

from dataclasses import dataclass

import numpy as np


def real_stack(bp, big_blind):
    """The game's stack in real chips at a big blind of ``big_blind`` chips."""
    table = bp.game.cards.table
    return round(big_blind * table.stack / table.big_blind)


def real_table(bp, stack, big_blind):
    """The real table of a game against ``bp``, one seat per seat of its game: every stack
    ``stack`` chips, the blueprint's blinds and ante scaled to a big blind of ``big_blind``
    chips."""
    cards = bp.game.cards
    table = cards.table
    return cards.engine.TableConfig(
        stacks=(stack,) * bp.game.num_players,
        small_blind=round(big_blind * table.small_blind / table.big_blind),
        big_blind=big_blind, ante=round(big_blind * table.ante / table.big_blind))


def real_pot(state):
    """The real pot once the seat to act has called: what a bet's pot fraction is of."""
    return state.pot_total + state.bet_to - state.street_commitments[state.to_act]


def real_raise_to(fraction, label, state):
    """The real raise-to of an abstract raise ``label`` whose size is ``fraction`` of the pot
    after calling (:meth:`Blueprint.raise_fractions`) for the seat to act of ``state``: that
    fraction of the *real* pot after calling, rounded to chips and clamped to what is legal;
    ``a`` is the real all-in; 0 where no raise is legal. What the bot bets, and the size
    :meth:`Blueprint.translate_line` reads as ``label`` exactly."""
    legal = state.legal_actions()
    if legal.min_to == 0:
        return 0
    if label == "a":
        return legal.max_to
    to = state.bet_to + round(fraction * float(real_pot(state)))
    return min(max(to, legal.min_to), legal.max_to)


def replay(state, kind, amount):
    """Apply one (kind, amount) pair of :func:`real_line` to ``state``."""
    if kind == "allin":
        return state.do_all_in()
    if kind in ("bet", "raise"):
        return getattr(state, f"do_{kind}")(int(amount))
    return getattr(state, f"do_{kind}")()


def bot_action(label, legal, raise_to=0):
    """The real action for an abstract label, legal under ``legal`` (a ``LegalActions``):
    ``f`` folds (checks when there is nothing to call), ``c`` checks or calls, ``a`` goes all-in,
    ``r...`` bets or raises to ``raise_to`` real chips clamped to [min_to, max_to]; a bet, raise
    or all-in that the rules do not allow becomes a check or call."""
    names = legal.names()
    passive = legal.action("check" if "check" in names else "call")
    if label == "f":
        return legal.action("fold") if "fold" in names else passive
    if label == "c" or legal.min_to == 0:             # min_to is 0 when no bet/raise is legal
        return passive
    kind = "bet" if "bet" in names else "raise"
    to = legal.max_to if label == "a" else min(max(int(raise_to), legal.min_to), legal.max_to)
    return legal.action(kind, to)


def real_line(state):
    """The hand's decisions as (kind, amount) pairs for :meth:`Blueprint.translate_line`."""
    out = []
    for rec in state.actions:
        kind = rec.kind.name.lower()
        if rec.is_all_in and kind in ("bet", "raise"):
            kind = "allin"
        out.append((kind, rec.amount))
    return out


@dataclass
class Decision:
    action: object              # the engine's Action
    labels: list = None         # the abstract line (None when off the tree)
    probs: dict = None          # the blueprint's strategy there
    label: str = "c"            # the sampled abstract action
    note: str = ""


class BlueprintBot:
    """Plays the seat to act of a real ``HandState`` from a Blueprint (one bot can play every
    bot seat of a table: it reads the line the same way for each); ``rng`` (a numpy
    Generator) samples its actions."""

    def __init__(self, bp, big_blind, rng):
        self.bp, self.big_blind, self.rng = bp, big_blind, rng
        table = bp.game.cards.table
        self.scale = big_blind / (table.chips_per_bb * table.big_blind)  # real per tree chip
        self._hand, self._hand_seed = None, 0

    def translate(self, state, hand=None):
        """(abstract labels, Translations) of the real hand so far, read on the real pot.
        Off-tree sizes are read at random with the pseudo-harmonic probabilities; the draws are
        seeded once per hand, so the bot keeps its reading of a bet for the rest of the hand.
        ``hand``: the real hand that ``state`` is a copy of, where a best response looks ahead
        on copies (the copy is read with that hand's draws; None: ``state`` is the hand)."""
        hand = state if hand is None else hand
        if hand is not self._hand:
            self._hand, self._hand_seed = hand, int(self.rng.integers(2**63))
        return self.bp.translate_line(real_line(state), self.big_blind, rng=self.draws(),
                                      stacks=state.config.stacks)

    def draws(self):
        """The hand's translation draws: a generator on the hand's seed, fresh for each line read,
        so a line and its continuations read their off-tree sizes alike (a best response that
        weighs every reading, :mod:`holdem.subgame.lbr`, puts its own draws here)."""
        return np.random.default_rng(self._hand_seed)

    def reading(self, state):
        """How the bot reads the last action of the hand, a bet, raise or all-in, in words;
        None where its size is on the abstract tree or the hand has left the tree."""
        try:
            labels, notes = self.translate(state)
        except ValueError:
            return None
        note = notes[-1]
        if note.is_exact:
            return None
        meaning = self.bp.action_meanings(labels[:-1])
        options = " or ".join(f"{label} ({meaning[label]}) {100 * p:.0f}%"
                              for label, _, p in note.options)
        return (f"{note.fraction:.2f} x pot is not a size of the bot's tree: it reads it as "
                f"{options} (pseudo-harmonic on the real pot, drawn once per hand)")

    def decide(self, state):
        """The bot's :class:`Decision` for the seat to act of ``state``."""
        bp = self.bp
        me, legal = state.to_act, state.legal_actions()
        try:
            labels, _ = self.translate(state)
            player, street, _ = bp.actions_at(labels)
            if player != me or street != int(state.street):
                raise ValueError("the abstract hand does not reach this decision")
        except ValueError as exc:
            return Decision(bot_action("c", legal), note=f"off the abstract tree ({exc}): "
                                                         "the bot checks or calls")
        probs = bp.query(labels, state.hole_cards[me], state.board)
        p = np.array(list(probs.values()))
        index = int(self.rng.choice(len(p), p=p / p.sum()))
        label = list(probs)[index]
        fraction = dict((lab, f) for f, lab in bp.raise_fractions(labels)).get(label, 0.0)
        return Decision(bot_action(label, legal, real_raise_to(fraction, label, state)),
                        labels, probs, label)


def warm_up(bp):
    """Compile (or load) the kernels a hand needs, so that it does not pause mid-game: the
    bucket lookup of the bot's decisions and the evaluator of showdowns."""
    from holdem.evaluator import rank7

    bp.query([], "2c 3d")
    rank7("2c 3d 4h 5s 7c 8d 9h")
