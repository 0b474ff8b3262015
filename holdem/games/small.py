"""Kuhn poker and Leduc hold'em, for 2 or 3 players: fixed-limit games with one private card and
at most one board card.

Both are built from one description (:class:`LimitRules`): antes, one bet size per round and a cap
on bets per round (the opening bet counts), with OpenSpiel's rules for any number of players
(``kuhn_poker`` and ``leduc_poker`` with ``players=N``): the deck has N + 1 ranks (J, Q, K, then
A), player 0 acts first in every round (the first player still in, on the second), play goes
round the table skipping players who folded, and a round closes when every player still in has
checked, or has called the last bet. Folding is only offered facing a bet. A fold that leaves one
player ends the hand; otherwise the pot goes to the strongest hand(s) left at the end, split
evenly on a tie. Two players give the classic games: Leduc uses a 6-card deck J,Q,K x 2 suits,
bets of 2 then 4, at most 2 bets per round, pair beats high card; Kuhn uses J,Q,K, one round,
bet 1. Infosets use ranks only (suit isomorphism): the bucket of a player on round 0 is its
private rank; on round 1 it is ``private * num_ranks + board``.
"""

from dataclasses import dataclass, replace


from holdem.games.tree import ActionCode, NodeKind, TreeBuilder

RANK_LETTERS = "JQKA"
MAX_PLAYERS = len(RANK_LETTERS) - 1
"""The most players a small game deals to (N + 1 ranks, each with a letter)."""


@dataclass(frozen=True)
class LimitRules:
    """A fixed-limit game with one private card per player."""

    name: str
    deck_ranks: tuple          # rank of each card in the deck
    num_ranks: int
    ante: float
    bet_sizes: tuple           # one per round; the number of rounds is len(bet_sizes)
    max_bets: int              # per round, the opening bet included
    fold_after_bet_letter: str = "f"
    num_players: int = 2

    @property
    def num_streets(self):
        return len(self.bet_sizes)

    def with_players(self, num_players):
        """The same game for ``num_players`` (2..MAX_PLAYERS): N + 1 ranks, as many suits."""
        if not 2 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"{self.name}: 2..{MAX_PLAYERS} players, got {num_players}")
        if num_players == self.num_players:
            return self
        suits = len(self.deck_ranks) // self.num_ranks
        ranks = num_players + 1
        return replace(self, num_players=num_players, num_ranks=ranks,
                       deck_ranks=tuple(r for r in range(ranks) for _ in range(suits)))


KUHN = LimitRules("kuhn", deck_ranks=(0, 1, 2), num_ranks=3, ante=1.0, bet_sizes=(1.0,),
                  max_bets=1)
LEDUC = LimitRules("leduc", deck_ranks=(0, 0, 1, 1, 2, 2), num_ranks=3, ante=1.0,
                   bet_sizes=(2.0, 4.0), max_bets=2)


def build_limit_tree(rules):
    """Betting tree of a limit game (see :mod:`holdem.games.tree`). A decision node's spec
    carries the bets of its round (``bets``) and the checks or calls since the last bet
    (``calls``), from which the round closes as OpenSpiel's ``ReadyForNextRound`` says."""
    n = rules.num_players
    builder = TreeBuilder(num_players=n)
    builder.add_root(dict(kind=NodeKind.DECISION, player=0, street=0, contrib=(rules.ante,) * n,
                          folded=0, bets=0, calls=0))
    last_street = rules.num_streets - 1

    def next_in(folded, after):
        """The first player after seat ``after`` who has not folded."""
        return next(q % n for q in range(after + 1, after + n + 1) if not folded >> (q % n) & 1)

    def after_action(p, street, contrib, folded, bets, calls):
        left = n - bin(folded).count("1")
        if left == 1:
            return dict(kind=NodeKind.FOLD, player=p, street=street, contrib=contrib,
                        folded=folded)
        if calls < (left if bets == 0 else left - 1):
            return dict(kind=NodeKind.DECISION, player=next_in(folded, p), street=street,
                        contrib=contrib, folded=folded, bets=bets, calls=calls)
        if street == last_street:
            return dict(kind=NodeKind.SHOWDOWN, street=street, contrib=contrib, folded=folded)
        return dict(kind=NodeKind.DECISION, player=next_in(folded, -1), street=street + 1,
                    contrib=contrib, folded=folded, bets=0, calls=0)

    def expand(spec):
        p, street, contrib, folded = spec["player"], spec["street"], spec["contrib"], spec["folded"]
        stake = max(contrib)
        children = []
        if contrib[p] < stake:
            children.append((ActionCode.FOLD, after_action(p, street, contrib, folded | 1 << p,
                                                           spec["bets"], spec["calls"])))
        called = list(contrib)
        called[p] = stake
        children.append((ActionCode.CALL, after_action(p, street, tuple(called), folded,
                                                       spec["bets"], spec["calls"] + 1)))
        if spec["bets"] < rules.max_bets:
            raised = list(called)
            raised[p] += rules.bet_sizes[street]
            children.append((ActionCode.RAISE, after_action(p, street, tuple(raised), folded,
                                                            spec["bets"] + 1, 0)))
        return children

    return builder.build(expand)


def limit_game(rules):
    """A limit game as a :class:`holdem.games.tree_game.TreeGame` (exact evaluation:
    its trees and decks are tiny)."""
    from holdem.games.deal_kernels import small_deal
    from holdem.games.tree_game import tree_game

    tree = build_limit_tree(rules)
    stride = rules.num_ranks * rules.num_ranks if rules.num_streets > 1 else rules.num_ranks
    return tree_game(rules.name, tree, small_deal(rules), bucket_stride=stride,
                     num_streets=rules.num_streets, deck_size=len(rules.deck_ranks),
                     rules=rules, exact=rules)


def _players(config):
    return 2 if config is None else config.game.num_players


def build_kuhn(config=None):
    return limit_game(KUHN.with_players(_players(config)))


def build_leduc(config=None):
    return limit_game(LEDUC.with_players(_players(config)))
