"""Matches between strategies and what they leave: head-to-head play against bots or another
blueprint (``headtohead``, on ``play_kernels``), two blueprints of different bet menus on the
real game (``crossmatch``, on ``crossmatch_kernels``), and the hands played as PHH hand histories
(``hand_history``).
"""
