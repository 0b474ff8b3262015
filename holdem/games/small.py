"""Kuhn poker and Leduc hold'em: fixed-limit games with one private card and at most one board card.

Both are built from one description (:class:`LimitRules`): antes, one bet size per round and a cap
on bets per round (the opening bet counts). Player 0 acts first in every round. Leduc uses a
6-card deck J,Q,K x 2 suits, bets of 2 then 4, at most 2 bets per round; pair beats high card.
Kuhn uses J,Q,K, one round, bet 1. Infosets use ranks only (suit isomorphism): the bucket of a
player on round 0 is its private rank; on round 1 it is ``private * num_ranks + board``.
"""

from dataclasses import dataclass


from holdem.games.tree import ActionCode, NodeKind, TreeBuilder

RANK_LETTERS = "JQK"


@dataclass(frozen=True)
class LimitRules:
    """A two-player fixed-limit game with one private card per player."""

    name: str
    deck_ranks: tuple          # rank of each card in the deck
    num_ranks: int
    ante: float
    bet_sizes: tuple           # one per round; the number of rounds is len(bet_sizes)
    max_bets: int              # per round, the opening bet included
    fold_after_bet_letter: str = "f"

    @property
    def num_streets(self):
        return len(self.bet_sizes)


KUHN = LimitRules("kuhn", deck_ranks=(0, 1, 2), num_ranks=3, ante=1.0, bet_sizes=(1.0,),
                  max_bets=1)
LEDUC = LimitRules("leduc", deck_ranks=(0, 0, 1, 1, 2, 2), num_ranks=3, ante=1.0,
                   bet_sizes=(2.0, 4.0), max_bets=2)


def build_limit_tree(rules):
    """Betting tree of a two-player limit game (see :mod:`holdem.games.tree`)."""
    builder = TreeBuilder(num_players=2)
    start = dict(kind=NodeKind.DECISION, player=0, street=0, contrib=(rules.ante, rules.ante),
                 bets=0, acted=0)
    builder.add_root(start)
    last_street = rules.num_streets - 1

    def expand(spec):
        p, street, contrib = spec["player"], spec["street"], spec["contrib"]
        facing = contrib[1 - p] - contrib[p]
        children = []
        if facing > 0:
            children.append((ActionCode.FOLD, dict(kind=NodeKind.FOLD, player=p, street=street,
                                                   contrib=contrib)))
        called = list(contrib)
        called[p] = contrib[1 - p]
        round_closes = facing > 0 or spec["acted"] >= 1
        if not round_closes:
            nxt = dict(kind=NodeKind.DECISION, player=1 - p, street=street,
                       contrib=tuple(called), bets=spec["bets"], acted=spec["acted"] + 1)
        elif street == last_street:
            nxt = dict(kind=NodeKind.SHOWDOWN, street=street, contrib=tuple(called))
        else:
            nxt = dict(kind=NodeKind.DECISION, player=0, street=street + 1,
                       contrib=tuple(called), bets=0, acted=0)
        children.append((ActionCode.CALL, nxt))
        if spec["bets"] < rules.max_bets:
            raised = list(called)
            raised[p] += rules.bet_sizes[street]
            children.append((ActionCode.RAISE, dict(
                kind=NodeKind.DECISION, player=1 - p, street=street, contrib=tuple(raised),
                bets=spec["bets"] + 1, acted=spec["acted"] + 1)))
        return children

    return builder.build(expand)


def limit_game(rules):
    """A two-player limit game as a :class:`holdem.games.tree_game.TreeGame` (exact evaluation:
    its trees and decks are tiny)."""
    from holdem.games.deal_kernels import small_deal
    from holdem.games.interface import EXACT
    from holdem.games.tree_game import tree_game

    tree = build_limit_tree(rules)
    stride = rules.num_ranks * rules.num_ranks if rules.num_streets > 1 else rules.num_ranks
    return tree_game(rules.name, tree, small_deal(rules), bucket_stride=stride,
                     num_streets=rules.num_streets, deck_size=len(rules.deck_ranks),
                     capabilities=(EXACT,), rules=rules)


def build_kuhn(config=None):
    return limit_game(KUHN)


def build_leduc(config=None):
    return limit_game(LEDUC)
