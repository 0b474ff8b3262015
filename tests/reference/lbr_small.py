"""A slow, plain local best response (LBR) for the small games: the oracle for
:mod:`holdem.analysis.lbr.small`.

It shares only the betting tree (``kind``, ``player``, ``street``, ``child_start``,
``num_actions``, ``action``, ``history``, ``contrib``) and the deals and payoffs of
:mod:`tests.reference.best_response` with the code under test. Every deal (ordered draw of
physical cards) is played on its own, LBR in ``seat``:

- at each LBR decision the opponent's range is rebuilt from scratch: every card LBR cannot see
  gets weight 1 x the product, over the opponent's decisions on the path so far, of the
  probability its strategy gave the action taken with that card (Bayes' rule; with
  ``bayes=False`` the products are left out and the prior stands);
- equity against a card is LBR's pot share over every board card still unseen, from
  ``(pairs the board, rank)`` tuples;
- the action values are the formulas of the LBR paper as the No-Limit kernels write them
  (:mod:`holdem.analysis.lbr.kernels`), spelled out per action below.

``lbr_value`` also returns the decisions it made, keyed by infoset key, so a test can check that
LBR is a pure strategy of the game and value it with the exact evaluator.
"""

import itertools

from tests.reference.best_response import Deal, payoff

DECISION, FOLD = 0, 1
FOLD_ACTION, CALL_ACTION = 0, 1
TIE = 1e-9


def _hand(ranks, card, board):
    return (board is not None and ranks[card] == ranks[board], ranks[card])


def _share(ranks, mine, theirs, board):
    a, b = _hand(ranks, mine, board), _hand(ranks, theirs, board)
    return 1.0 if a > b else 0.0 if a < b else 0.5


def _key(game, node, card, board):
    ranks, r = game.rules.deck_ranks, game.rules.num_ranks
    bucket = ranks[card] if game.tree.street[node] == 0 else ranks[card] * r + ranks[board]
    return int(game.tree.history[node]) * game.bucket_stride + bucket


def _children(game, node):
    start = int(game.tree.child_start[node])
    return [start + a for a in range(int(game.tree.num_actions[node]))]


def _child_with(game, node, action):
    for a, child in enumerate(_children(game, node)):
        if game.tree.action[child] == action:
            return a, child
    return None, None


def lbr_value(game, profile, seat, first_street=0, bayes=True):
    """(LBR's expected chips as player ``seat``, {infoset key: action index it chose})."""
    tree = game.tree
    ranks = game.rules.deck_ranks
    n = len(ranks)
    has_board = game.num_streets > 1
    opp = 1 - seat
    draws = list(itertools.permutations(range(n), 3 if has_board else 2))
    decisions = {}

    def range_at(path, lbr_card, board):
        weight = {}
        for c in range(n):
            if c == lbr_card or c == board:
                continue
            w = 1.0
            if bayes:
                for node, a in path:
                    if tree.player[node] == opp:
                        w *= profile[_key(game, node, c, board)][a]
            weight[c] = w
        total = sum(weight.values())
        if total <= 0.0:
            return {c: 1.0 / len(weight) for c in weight}
        return {c: w / total for c, w in weight.items()}

    def equity(lbr_card, c, board):
        if board is not None or not has_board:
            return _share(ranks, lbr_card, c, board)
        shares = [_share(ranks, lbr_card, c, b) for b in range(n) if b not in (lbr_card, c)]
        return sum(shares) / len(shares)

    def choose(node, path, lbr_card, board):
        if tree.street[node] < first_street:
            return _child_with(game, node, CALL_ACTION)[0]
        rng = range_at(path, lbr_card, board)
        eq = {c: equity(lbr_card, c, board) for c in rng}
        wp = sum(rng[c] * eq[c] for c in rng)
        values = []
        for child in _children(game, node):
            contrib = tree.contrib[child]
            if tree.kind[child] == FOLD:
                values.append(-contrib[seat])
            elif tree.action[child] == CALL_ACTION:
                values.append(wp * (contrib[0] + contrib[1]) - contrib[seat])
            else:
                # the opponent answers the raise at ``child``: fold, call (or re-raise)
                fi, _ = _child_with(game, child, FOLD_ACTION)
                ci, called = _child_with(game, child, CALL_ACTION)
                fold = {c: profile[_key(game, child, c, board)][fi] if fi is not None else 0.0
                        for c in rng}
                call = {c: profile[_key(game, child, c, board)][ci] for c in rng}
                fp = sum(rng[c] * fold[c] for c in rng)
                w_call = sum(rng[c] * call[c] for c in rng)
                w_stay = sum(rng[c] * (1 - fold[c]) for c in rng)
                if w_call > 1e-12:
                    wp_call = sum(rng[c] * call[c] * eq[c] for c in rng) / w_call
                elif w_stay > 1e-12:
                    wp_call = sum(rng[c] * (1 - fold[c]) * eq[c] for c in rng) / w_stay
                else:
                    wp_call = wp
                pot = tree.contrib[called][0] + tree.contrib[called][1]
                values.append(fp * contrib[opp]
                              + (1 - fp) * (wp_call * pot - tree.contrib[called][seat]))
        best = max(values)
        return next(a for a, v in enumerate(values) if v >= best - TIE)

    def value(node, path, cards):
        if tree.kind[node] != DECISION:
            board = ranks[cards[2]] if has_board else None
            return payoff(game, node, Deal((ranks[cards[0]], ranks[cards[1]]), board, 1.0), seat)
        lbr_card, opp_card = cards[seat], cards[opp]
        board = cards[2] if tree.street[node] > 0 else None
        children = _children(game, node)
        if tree.player[node] == seat:
            a = choose(node, path, lbr_card, board)
            key = _key(game, node, lbr_card, board)
            assert decisions.setdefault(key, a) == a, "LBR is not a function of its infoset"
            return value(children[a], path + [(node, a)], cards)
        probs = profile[_key(game, node, opp_card, board)]
        return sum(probs[a] * value(child, path + [(node, a)], cards)
                   for a, child in enumerate(children))

    total = 0.0
    for cards in draws:
        total += value(0, [], cards) / len(draws)
    return total, decisions
