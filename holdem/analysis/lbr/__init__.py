"""Local best response (Lisy & Bowling 2017): against a heads-up blueprint over sampled hands
(``sampled``, on ``kernels``, ``hand_kernels``, ``belief_kernels`` and ``equity_kernels``), and
exact on the small games (``small``). LBR against the re-solving bot is
:mod:`holdem.subgame.lbr`, a floor up (it needs the subgame solver); it scores its hands with the
equities of this package (``sampled.combo_equity`` and ``sampled.allin_share``).
"""
