"""Strategy export: every visited infoset's record and reading an export back (``records``); the
multi-way walk (``multiway``).
"""
