"""Card-abstraction kernels: hand isomorphism index, hand-strength sweeps, run-time bucket lookup.

Everything here is @njit, iterative and allocation-free (``_nrt=False``): callers pass every
scratch array in. The Python side (:mod:`holdem.abstraction.isomorphism`,
:mod:`holdem.abstraction.buckets`) builds the tables, allocates, validates and owns the loops.

Hand isomorphism index (after Waugh 2013, "A Fast and Optimal Hand Isomorphism Algorithm")
    A hand is dealt in rounds (the hole pair, then the board as one set of 3, 4 or 5 cards; up to
    four rounds are supported). Each round's cards are given as a *key*: the OR of
    ``CARD_BITS`` (four 13-bit rank masks, one per suit, in 16-bit lanes).
    Per suit, the rank sets of the rounds form a *column*; two hands are isomorphic iff their
    multisets of columns are equal. A column has

    - a *code*: its per-round card counts ``n_r`` in mixed radix (``radix[r]``);
    - an *index* in ``[0, code_mult[code])``: the colex index of each round's rank set among the
      ranks the suit has not used in earlier rounds, combined in mixed radix (as in Waugh).

    The columns are sorted by (code descending, index descending); equal codes form a group whose
    indices are a multiset, ranked by the combinations-with-repetition colex formula
    ``sum_i C(a_i + i, i + 1)`` over the ascending indices ``a_i`` (size ``C(M + g - 1, g)``).
    The hand index is ``offset[P] + mixed radix of the group ranks``, where ``P`` packs the codes
    of suits 0..2 (suit 3's is implied) and ``offset[P]`` is the first index of the hand's
    configuration (its sorted code tuple). The index is dense: 169 / 1,286,792 / 13,960,050 /
    123,156,254 values for preflop / flop / turn / river. Tables: ``IsoTables`` in
    :mod:`holdem.abstraction.isomorphism`.

Hand strength (HS) on the river
    ``score = 2 * wins + ties`` against all C(45, 2) = 990 opponent hole pairs that share no card
    with the hand or the board, so ``HS = score / 1980`` exactly and the river bucket is a table
    lookup ``river_bucket[score]``. Run time ranks the unseen pairs once per deal (by rank pair
    where suits cannot matter, see :func:`river_prepare_kernel`) and counts per player; the
    builder ranks all 1,081 pairs of the 47 unseen cards, radix-sorts them and sweeps once to
    get every pair's score in O(pairs) (the card-removal correction keeps per-card counts, as
    in postflop-solver's showdown evaluation).
"""

import numpy as np

from holdem import rng
from holdem._jit import njit_exact, njit_inline
from holdem.evaluator.kernels import CARD_BITS, rank_key_kernel

NUM_RANKS = 13
RANK_MASK = (1 << NUM_RANKS) - 1
LANE_BITS = 16
NUM_PAIRS_47 = 1081            # C(47, 2): hole pairs from the cards not on a 5-card board
NUM_PAIRS_48 = 1128            # C(48, 2)
MAX_SCORE = 1980               # 2 * C(45, 2)
_IDX_BITS = 40                 # column index bits inside a sort key (code << 40 | index)
_IDX_MASK = (1 << _IDX_BITS) - 1

POPCOUNT = np.array([bin(i).count("1") for i in range(1 << NUM_RANKS)], dtype=np.int64)


def _ncr_table(n_max, k_max):
    table = np.zeros((n_max + 1, k_max + 1), dtype=np.int64)
    for n in range(n_max + 1):
        table[n, 0] = 1
        for k in range(1, min(n, k_max) + 1):
            table[n, k] = table[n - 1, k - 1] + table[n - 1, k]
    return table


NCR = _ncr_table(52, 7)


# --------------------------------------------------------------------------------------------
# Hand isomorphism index
# --------------------------------------------------------------------------------------------

@njit_inline
def _comb(n, k):
    """C(n, k) for small k and n >= 0 (exact: every partial product is a binomial)."""
    result = np.int64(1)
    for t in range(k):
        result = result * (n - t) // (t + 1)
    return result


@njit_inline
def _column(radix, num_rounds, k0, k1, k2, k3, shift):
    """(code, index) of the column of the suit in lane ``shift`` (see the module docstring)."""
    used = np.int64(0)
    index = np.int64(0)
    mult = np.int64(1)
    code = np.int64(0)
    for r in range(num_rounds):
        if r == 0:
            key = k0
        elif r == 1:
            key = k1
        elif r == 2:
            key = k2
        else:
            key = k3
        ranks = (key >> shift) & RANK_MASK
        free = ~used & RANK_MASK
        part = np.int64(0)
        j = 1
        x = ranks
        while x != 0:
            low = x & -x
            part += NCR[POPCOUNT[(low - 1) & free], j]
            j += 1
            x ^= low
        index += mult * part
        mult *= NCR[NUM_RANKS - POPCOUNT[used], j - 1]
        code += (j - 1) * radix[r]
        used |= ranks
    return code, index


@njit_inline
def _sort_desc(a, b):
    if a < b:
        return b, a
    return a, b


@njit_exact
def hand_index_kernel(radix, offset, code_mult, k0, k1, k2, k3):
    """Dense isomorphism index (int64) of a hand given per-round keys ``k0..k3`` (OR of
    ``CARD_BITS`` of distinct cards, as many per round as the tables' rounds; unused rounds 0).
    ``radix`` int64[num_rounds + 1], ``offset`` int64[B**3], ``code_mult`` int64[B] with
    ``B = radix[num_rounds]`` come from ``IsoTables``."""
    num_rounds = radix.shape[0] - 1
    big = radix[num_rounds]
    c0, i0 = _column(radix, num_rounds, k0, k1, k2, k3, 0)
    c1, i1 = _column(radix, num_rounds, k0, k1, k2, k3, LANE_BITS)
    c2, i2 = _column(radix, num_rounds, k0, k1, k2, k3, 2 * LANE_BITS)
    c3, i3 = _column(radix, num_rounds, k0, k1, k2, k3, 3 * LANE_BITS)
    result = offset[c0 + big * (c1 + big * c2)]
    s0 = (c0 << _IDX_BITS) | i0
    s1 = (c1 << _IDX_BITS) | i1
    s2 = (c2 << _IDX_BITS) | i2
    s3 = (c3 << _IDX_BITS) | i3
    # Optimal 4-element sorting network, descending.
    s0, s1 = _sort_desc(s0, s1)
    s2, s3 = _sort_desc(s2, s3)
    s0, s2 = _sort_desc(s0, s2)
    s1, s3 = _sort_desc(s1, s3)
    s1, s2 = _sort_desc(s1, s2)
    cols = (s0, s1, s2, s3)
    mult = np.int64(1)
    i = 0
    while i < 4:
        code = cols[i] >> _IDX_BITS
        g = 1
        while i + g < 4 and (cols[i + g] >> _IDX_BITS) == code:
            g += 1
        size = code_mult[code]
        if g == 1:
            part = cols[i] & _IDX_MASK
        else:
            part = np.int64(0)
            for q in range(g):                      # q-th smallest index sits at i + g - 1 - q
                part += _comb((cols[i + g - 1 - q] & _IDX_MASK) + q, q + 1)
            size = _comb(size + g - 1, g)
        result += mult * part
        mult *= size
        i += g
    return result


@njit_exact
def hand_index_batch_kernel(radix, offset, code_mult, cards, round_sizes, out):
    """Index every row of ``cards`` (n, total) (rounds laid out consecutively with the sizes in
    ``round_sizes``) into ``out`` (n,) int64, in place."""
    num_rounds = round_sizes.shape[0]
    for i in range(cards.shape[0]):
        k0 = np.int64(0)
        k1 = np.int64(0)
        k2 = np.int64(0)
        k3 = np.int64(0)
        pos = 0
        for r in range(num_rounds):
            key = np.int64(0)
            for _ in range(round_sizes[r]):
                key |= CARD_BITS[cards[i, pos]]
                pos += 1
            if r == 0:
                k0 = key
            elif r == 1:
                k1 = key
            elif r == 2:
                k2 = key
            else:
                k3 = key
        out[i] = hand_index_kernel(radix, offset, code_mult, k0, k1, k2, k3)


@njit_exact
def flop_census_kernel(radix, offset, code_mult, counts):
    """Add one to ``counts[index]`` for every raw flop hand (hole pair, flop set): 1326 *
    C(50, 3) = 25,989,600 hands; ``counts`` (1,286,792,) int64 zeros, in place. Returns the
    number of out-of-range indices (0 when the indexer is correct)."""
    bad = 0
    n = counts.shape[0]
    for h0 in range(52):
        for h1 in range(h0 + 1, 52):
            kh = CARD_BITS[h0] | CARD_BITS[h1]
            for f0 in range(52):
                if f0 == h0 or f0 == h1:
                    continue
                for f1 in range(f0 + 1, 52):
                    if f1 == h0 or f1 == h1:
                        continue
                    for f2 in range(f1 + 1, 52):
                        if f2 == h0 or f2 == h1:
                            continue
                        kf = CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2]
                        idx = hand_index_kernel(radix, offset, code_mult, kh, kf, 0, 0)
                        if idx < 0 or idx >= n:
                            bad += 1
                        else:
                            counts[idx] += 1
    return bad


@njit_exact
def board_census_kernel(radix, offset, code_mult, num_cards, reps, counts):
    """Canonical boards of ``num_cards`` (3 or 4) cards with the one-round board indexer
    (``radix`` etc.): ``counts[index]`` += 1 for every raw board and ``reps[index]`` (m, 4)
    int64 = the first raw board met (cards ascending; -1 pads a flop), in place. ``counts``
    must start at zero."""
    for f0 in range(52):
        for f1 in range(f0 + 1, 52):
            for f2 in range(f1 + 1, 52):
                kf = CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2]
                for t in range(f2 + 1 if num_cards == 4 else -1, 52 if num_cards == 4 else 0):
                    key = kf | CARD_BITS[t] if t >= 0 else kf
                    idx = hand_index_kernel(radix, offset, code_mult, key, 0, 0, 0)
                    if counts[idx] == 0:
                        reps[idx, 0] = f0
                        reps[idx, 1] = f1
                        reps[idx, 2] = f2
                        reps[idx, 3] = t
                    counts[idx] += 1


# --------------------------------------------------------------------------------------------
# River hand strength
# --------------------------------------------------------------------------------------------

@njit_inline
def _splitmix(x):
    return rng.mix64(x + rng.GOLDEN)


@njit_inline
def _seed_state(state, seed, stream):
    """Fill the xoshiro state (uint64[4]) from (seed, stream): independent of thread order."""
    x = _splitmix(np.uint64(seed) * np.uint64(0x100000001B3) + np.uint64(stream))
    for i in range(4):
        x = _splitmix(x)
        state[i] = x
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = np.uint64(1)


@njit_inline
def _choose_first(perm, n, m, state):
    """Shuffle so ``perm[:m]`` is a uniform m-subset of ``perm[:n]`` (partial Fisher-Yates);
    with m >= n the order is kept."""
    if m >= n:
        return n
    for i in range(m):
        j = i + rng.below(state, n - i)
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp
    return m


@njit_inline
def _radix_pass(src, dst, count, shift, n):
    for d in range(count.shape[0]):
        count[d] = 0
    for i in range(n):
        count[(src[i] >> shift) & 1023] += 1
    total = np.int64(0)
    for d in range(count.shape[0]):
        c = count[d]
        count[d] = total
        total += c
    for i in range(n):
        d = (src[i] >> shift) & 1023
        dst[count[d]] = src[i]
        count[d] += 1


@njit_exact
def river_scores_kernel(board_key, cards, pair_a, pair_b, keys, tmp, count, less, equal,
                        scores):
    """Scores (2 * wins + ties vs every disjoint pair) of every pair of the 47 ``cards`` not on
    the river board ``board_key``. Pairs are ``(cards[pair_a[i]], cards[pair_b[i]])`` for i <
    1081; ``scores`` (1081,) int64 is written; ``keys``/``tmp`` (1081,), ``count`` (1024,),
    ``less``/``equal`` (47,) int64 are scratch. Rank keys are radix-sorted (3 passes of 10
    bits), then one sweep over equal-rank groups removes the pairs sharing a card."""
    n = NUM_PAIRS_47
    for i in range(n):
        rank = rank_key_kernel(board_key | CARD_BITS[cards[pair_a[i]]]
                               | CARD_BITS[cards[pair_b[i]]])
        keys[i] = (rank << 11) | i
    _radix_pass(keys, tmp, count, 11, n)
    _radix_pass(tmp, keys, count, 21, n)
    _radix_pass(keys, tmp, count, 31, n)
    for c in range(47):
        less[c] = 0
        equal[c] = 0
    below = np.int64(0)
    i = 0
    while i < n:
        rank = tmp[i] >> 11
        j = i
        while j < n and (tmp[j] >> 11) == rank:
            p = tmp[j] & 2047
            equal[pair_a[p]] += 1
            equal[pair_b[p]] += 1
            j += 1
        group = j - i
        for q in range(i, j):
            p = tmp[q] & 2047
            a = pair_a[p]
            b = pair_b[p]
            scores[p] = (2 * (below - less[a] - less[b])
                         + (group - equal[a] - equal[b] + 1))
        for q in range(i, j):
            p = tmp[q] & 2047
            a = pair_a[p]
            b = pair_b[p]
            less[a] += 1
            less[b] += 1
            equal[a] = 0
            equal[b] = 0
        below += group
        i = j


@njit_exact
def fill_pairs_kernel(n, pair_a, pair_b):
    """Pairs (a < b) of positions 0..n-1 in lexicographic order into ``pair_a``/``pair_b``."""
    k = 0
    for a in range(n):
        for b in range(a + 1, n):
            pair_a[k] = a
            pair_b[k] = b
            k += 1
    return k


@njit_inline
def _pair_index(a, b, n):
    """Lexicographic index of the pair (a < b) of positions 0..n-1."""
    return a * (2 * n - a - 1) // 2 + (b - a - 1)


@njit_inline
def _power(x, e):
    result = 1.0
    for _ in range(e):
        result *= x
    return result


@njit_exact
def turn_pass_kernel(reps, weights, start, stop, radix, offset, code_mult, exponent,
                     river_samples, seed, turn_feature, turn_weight, river_hist, iwork, fwork,
                     state):
    """E[HS^(2 * exponent)] of every hole pair on the canonical turn boards ``reps[start:stop]``
    (4 cards each; ``weights`` = raw boards per class) over ``river_samples`` river cards
    (48 = all, exact; fewer = a seeded random subset per board). Writes
    ``turn_feature[index]`` (float64, the feature times 1980**(2*exponent)), adds the board's
    weight to ``turn_weight[index]`` for every hole pair and to ``river_hist[score]`` for every
    (river, pair). ``iwork`` int64 and ``fwork`` float64 scratch (sizes in ``buckets``),
    ``state`` uint64[4]."""
    cards48 = iwork[0:48]
    cards47 = iwork[48:95]
    pair_a = iwork[96:96 + NUM_PAIRS_47]
    pair_b = iwork[1200:1200 + NUM_PAIRS_47]
    keys = iwork[2300:2300 + NUM_PAIRS_47]
    tmp = iwork[3400:3400 + NUM_PAIRS_47]
    scores = iwork[4500:4500 + NUM_PAIRS_47]
    count = iwork[5600:5600 + 1024]
    less = iwork[6700:6747]
    equal = iwork[6800:6847]
    perm = iwork[6900:6948]
    acc_count = iwork[7000:7000 + NUM_PAIRS_48]
    acc_sum = fwork[0:NUM_PAIRS_48]
    fill_pairs_kernel(47, pair_a, pair_b)
    for rep in range(start, stop):
        f0 = reps[rep, 0]
        f1 = reps[rep, 1]
        f2 = reps[rep, 2]
        t = reps[rep, 3]
        w = weights[rep]
        kf = CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2]
        kt = CARD_BITS[t]
        n = 0
        for c in range(52):
            if c != f0 and c != f1 and c != f2 and c != t:
                cards48[n] = c
                n += 1
        for p in range(NUM_PAIRS_48):
            acc_sum[p] = 0.0
            acc_count[p] = 0
        for j in range(48):
            perm[j] = j
        _seed_state(state, seed, rep)
        m = _choose_first(perm, 48, river_samples, state)
        for s in range(m):
            jr = perm[s]
            for c in range(47):
                cards47[c] = cards48[c + (c >= jr)]
            board_key = kf | kt | CARD_BITS[cards48[jr]]
            river_scores_kernel(board_key, cards47, pair_a, pair_b, keys, tmp, count, less,
                                equal, scores)
            for p in range(NUM_PAIRS_47):
                a = pair_a[p]
                b = pair_b[p]
                a48 = a + (a >= jr)
                b48 = b + (b >= jr)
                sc = scores[p]
                q = _pair_index(a48, b48, 48)
                acc_sum[q] += _power(np.float64(sc * sc), exponent)
                acc_count[q] += 1
                river_hist[sc] += w
        q = 0
        for a in range(48):
            ka = CARD_BITS[cards48[a]]
            for b in range(a + 1, 48):
                idx = hand_index_kernel(radix, offset, code_mult, ka | CARD_BITS[cards48[b]],
                                        kf | kt, 0, 0)
                turn_feature[idx] = acc_sum[q] / acc_count[q]
                turn_weight[idx] += w
                q += 1


@njit_inline
def flop_turn_cards(reps, rep, turn_samples, seed, cards49, perm, state):
    """The canonical flop ``reps[rep]``'s 49 unseen cards into ``cards49`` and its turn cards
    into ``perm[:m]`` (positions in ``cards49``: all 49, or the seeded subset of
    ``turn_samples`` that every flop pass of this flop uses); returns (flop key, m)."""
    f0 = reps[rep, 0]
    f1 = reps[rep, 1]
    f2 = reps[rep, 2]
    n = 0
    for c in range(52):
        if c != f0 and c != f1 and c != f2:
            cards49[n] = c
            n += 1
    for j in range(49):
        perm[j] = j
    _seed_state(state, seed, np.int64(1) << 32 | rep)
    m = _choose_first(perm, 49, turn_samples, state)
    return CARD_BITS[f0] | CARD_BITS[f1] | CARD_BITS[f2], m


@njit_exact
def flop_pass_kernel(reps, weights, start, stop, flop_radix, flop_offset, flop_code_mult,
                     turn_radix, turn_offset, turn_code_mult, turn_feature, turn_samples, seed,
                     flop_feature, flop_weight, iwork, state):
    """Flop feature of every hole pair on the canonical flops ``reps[start:stop]``: the mean of
    ``turn_feature`` over ``turn_samples`` turn cards (47 = all, exact; fewer = a seeded random
    subset per flop, at least 3 so every pair keeps one). Writes ``flop_feature[index]`` and adds
    the flop's weight to ``flop_weight[index]``. ``iwork`` int64 (>= 100) and ``state``
    uint64[4] are scratch."""
    cards49 = iwork[0:49]
    perm = iwork[50:99]
    for rep in range(start, stop):
        w = weights[rep]
        kf, m = flop_turn_cards(reps, rep, turn_samples, seed, cards49, perm, state)
        for a in range(49):
            for b in range(a + 1, 49):
                kh = CARD_BITS[cards49[a]] | CARD_BITS[cards49[b]]
                total = 0.0
                num = 0
                for s in range(m):
                    jt = perm[s]
                    if jt == a or jt == b:
                        continue
                    idx = hand_index_kernel(turn_radix, turn_offset, turn_code_mult, kh,
                                            kf | CARD_BITS[cards49[jt]], 0, 0)
                    total += turn_feature[idx]
                    num += 1
                idx = hand_index_kernel(flop_radix, flop_offset, flop_code_mult, kh, kf, 0, 0)
                flop_feature[idx] = total / num
                flop_weight[idx] += w


@njit_exact
def preflop_equity_kernel(holes, start, stop, num_players, samples, seed, equity, deck, state):
    """Monte Carlo pot share of the hole pairs ``holes[start:stop]`` ((n, 2) ints) against
    ``num_players - 1`` uniformly random opponents and a random board: win 1, an m-way tie 1/m.
    Writes ``equity[i]`` (float64) for i in start..stop-1; ``deck`` int64[52] and ``state``
    uint64[4] are scratch. Row i draws from its own stream (seed, i)."""
    draw = 5 + 2 * (num_players - 1)
    for i in range(start, stop):
        h0 = holes[i, 0]
        h1 = holes[i, 1]
        _seed_state(state, seed, (np.int64(2) << 32) | i)
        n = 0
        for c in range(52):
            if c != h0 and c != h1:
                deck[n] = c
                n += 1
        total = 0.0
        for _ in range(samples):
            for j in range(draw):
                k = j + rng.below(state, 50 - j)
                tmp = deck[j]
                deck[j] = deck[k]
                deck[k] = tmp
            board = (CARD_BITS[deck[0]] | CARD_BITS[deck[1]] | CARD_BITS[deck[2]]
                     | CARD_BITS[deck[3]] | CARD_BITS[deck[4]])
            mine = rank_key_kernel(board | CARD_BITS[h0] | CARD_BITS[h1])
            ties = 1
            lost = False
            for p in range(num_players - 1):
                other = rank_key_kernel(board | CARD_BITS[deck[5 + 2 * p]]
                                        | CARD_BITS[deck[6 + 2 * p]])
                if other > mine:
                    lost = True
                    break
                if other == mine:
                    ties += 1
            if not lost:
                total += 1.0 / ties
        equity[i] = total / samples


# --------------------------------------------------------------------------------------------
# Run time
# --------------------------------------------------------------------------------------------

# Run-time river scoring. A hole pair with no card of the board's flush suit (a suit with 3+
# board cards; none on most boards) ranks by its two ranks alone, so those pairs are ranked
# once per rank pair (at most 91 evaluations) and counted per player with card removal by
# rank; only pairs holding a flush-suit card (at most 415) are ranked one by one. About 3x
# fewer evaluations than ranking all 1,081 unseen pairs.
# Work layout (int64): [0:91] rank-pair group ranks, [91:182] their ranks r1 | r2 << 4,
# [182:195] unseen non-flush-suit cards per rank, [195:208] the same less one player's cards,
# [208:221] / [221:234] two such cards per rank, [240:655] flush-suit pair ranks, [660:1075]
# their card masks, [1080] group count, [1081] flush-suit pair count, [1082] the board key.
_W_GROUP_RANK = 0
_W_GROUP_RANKS = 91
_W_COUNT = 182
_W_ADJUST = 195
_W_REP0 = 208
_W_REP1 = 221
_W_SUIT_RANK = 240
_W_SUIT_MASK = 660
_W_NUM_GROUPS = 1080
_W_NUM_SUITED = 1081
_W_BOARD_KEY = 1082
RUNTIME_WORK = 1088


@njit_inline
def _is_flush_card(board_key, card):
    """Whether ``card``'s suit has 3+ cards in the 5-card ``board_key``."""
    return POPCOUNT[(board_key >> (LANE_BITS * (card & 3))) & RANK_MASK] >= 3


@njit_exact
def river_prepare_kernel(board, work):
    """Rank the unseen hole pairs of the 5-card ``board`` into ``work`` (int64[>=
    RUNTIME_WORK]) for :func:`river_score_from_work`; once per deal."""
    b0 = board[0]
    b1 = board[1]
    b2 = board[2]
    b3 = board[3]
    b4 = board[4]
    board_key = (CARD_BITS[b0] | CARD_BITS[b1] | CARD_BITS[b2] | CARD_BITS[b3]
                 | CARD_BITS[b4])
    board_mask = ((np.int64(1) << b0) | (np.int64(1) << b1) | (np.int64(1) << b2)
                  | (np.int64(1) << b3) | (np.int64(1) << b4))
    flush_suit = -1
    for suit in range(4):
        if POPCOUNT[(board_key >> (LANE_BITS * suit)) & RANK_MASK] >= 3:
            flush_suit = suit
    for r in range(NUM_RANKS):
        work[_W_COUNT + r] = 0
    for c in range(52):
        if (board_mask >> c) & 1 or (c & 3) == flush_suit:
            continue
        r = c >> 2
        n = work[_W_COUNT + r]
        if n == 0:
            work[_W_REP0 + r] = c
        elif n == 1:
            work[_W_REP1 + r] = c
        work[_W_COUNT + r] = n + 1
    num_groups = 0
    for r1 in range(NUM_RANKS):
        n1 = work[_W_COUNT + r1]
        if n1 == 0:
            continue
        key1 = board_key | CARD_BITS[work[_W_REP0 + r1]]
        if n1 >= 2:
            work[_W_GROUP_RANK + num_groups] = rank_key_kernel(
                key1 | CARD_BITS[work[_W_REP1 + r1]])
            work[_W_GROUP_RANKS + num_groups] = r1 | (r1 << 4)
            num_groups += 1
        for r2 in range(r1 + 1, NUM_RANKS):
            if work[_W_COUNT + r2] > 0:
                work[_W_GROUP_RANK + num_groups] = rank_key_kernel(
                    key1 | CARD_BITS[work[_W_REP0 + r2]])
                work[_W_GROUP_RANKS + num_groups] = r1 | (r2 << 4)
                num_groups += 1
    num_suited = 0
    if flush_suit >= 0:
        for r in range(NUM_RANKS):
            f = 4 * r + flush_suit
            bit_f = np.int64(1) << f
            if board_mask & bit_f:
                continue
            key_f = board_key | CARD_BITS[f]
            for c in range(52):
                bit_c = np.int64(1) << c
                if board_mask & bit_c or c == f or ((c & 3) == flush_suit and c < f):
                    continue
                work[_W_SUIT_RANK + num_suited] = rank_key_kernel(key_f | CARD_BITS[c])
                work[_W_SUIT_MASK + num_suited] = bit_f | bit_c
                num_suited += 1
    work[_W_NUM_GROUPS] = num_groups
    work[_W_NUM_SUITED] = num_suited
    work[_W_BOARD_KEY] = board_key


@njit_exact
def river_score_from_work(work, h0, h1):
    """Score (2 * wins + ties vs the 990 pairs disjoint from the hand and the board) of the
    hole pair (h0, h1) on the board of the last :func:`river_prepare_kernel` call."""
    board_key = work[_W_BOARD_KEY]
    mine = rank_key_kernel(board_key | CARD_BITS[h0] | CARD_BITS[h1])
    for r in range(NUM_RANKS):
        work[_W_ADJUST + r] = work[_W_COUNT + r]
    num_groups = work[_W_NUM_GROUPS]
    num_suited = work[_W_NUM_SUITED]
    hole_mask = (np.int64(1) << h0) | (np.int64(1) << h1)
    for h in (h0, h1):
        if not _is_flush_card(board_key, h):
            work[_W_ADJUST + (h >> 2)] -= 1
    score = np.int64(0)
    for g in range(num_groups):
        r = work[_W_GROUP_RANK + g]
        ranks = work[_W_GROUP_RANKS + g]
        n1 = work[_W_ADJUST + (ranks & 15)]
        n2 = work[_W_ADJUST + (ranks >> 4)]
        count = n1 * (n1 - 1) // 2 if (ranks & 15) == (ranks >> 4) else n1 * n2
        score += count * (2 * (r < mine) + (r == mine))
    for i in range(num_suited):
        r = work[_W_SUIT_RANK + i]
        free = (work[_W_SUIT_MASK + i] & hole_mask) == 0
        score += free * (2 * (r < mine) + (r == mine))
    return score


@njit_exact
def river_score_kernel(hole0, hole1, board, work):
    """Score (2 * wins + ties vs the 990 disjoint pairs) of one hole pair on a 5-card ``board``
    (int array); ``work`` int64[>= RUNTIME_WORK]."""
    river_prepare_kernel(board, work)
    return river_score_from_work(work, hole0, hole1)


@njit_exact
def deal_buckets(tables, hole, board, num_players, buckets_out, work):
    """Buckets of every player of one deal, in place.

    ``tables`` a ``BucketTables``; ``hole`` int[num_players, 2] and ``board`` int[5] distinct
    cards 0..51; ``buckets_out`` int64[>= num_players, 4] gets (preflop, flop, turn, river)
    buckets per player; ``work`` int64[>= RUNTIME_WORK] scratch (``buckets.make_work``). The
    unseen pairs are ranked once for all players (:func:`river_prepare_kernel`).
    """
    kf = CARD_BITS[board[0]] | CARD_BITS[board[1]] | CARD_BITS[board[2]]
    kt = CARD_BITS[board[3]]
    river_prepare_kernel(board, work)
    for p in range(num_players):
        h0 = hole[p, 0]
        h1 = hole[p, 1]
        kh = CARD_BITS[h0] | CARD_BITS[h1]
        buckets_out[p, 0] = tables.preflop_bucket[h0 * 52 + h1]
        buckets_out[p, 1] = tables.flop_bucket[hand_index_kernel(
            tables.flop_radix, tables.flop_offset, tables.flop_code_mult, kh, kf, 0, 0)]
        buckets_out[p, 2] = tables.turn_bucket[hand_index_kernel(
            tables.turn_radix, tables.turn_offset, tables.turn_code_mult, kh, kf | kt, 0, 0)]
        buckets_out[p, 3] = tables.river_bucket[river_score_from_work(work, h0, h1)]


@njit_exact
def deal_buckets_batch_kernel(tables, holes, boards, num_players, buckets_out, work):
    """``deal_buckets`` for many deals: ``holes`` (n, P, 2), ``boards`` (n, 5), ``buckets_out``
    (n, P, 4) int64 (benchmarks and tests)."""
    for i in range(holes.shape[0]):
        deal_buckets(tables, holes[i], boards[i], num_players, buckets_out[i], work)


@njit_exact
def num_buckets(tables):
    """(k_preflop, k_flop, k_turn, k_river) of ``tables``; callable from Python and kernels."""
    k = tables.num_buckets
    return k[0], k[1], k[2], k[3]
