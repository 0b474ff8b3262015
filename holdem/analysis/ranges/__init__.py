"""Ranges and charts: every player's range at any node of a blueprint (``node``, on ``kernels``),
range strings (``strings``) and 13 x 13 range charts (``charts``).
"""
