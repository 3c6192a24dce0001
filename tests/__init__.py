"""The tests, one folder per package of the checkout (``project/``: the checkout as a whole)."""
