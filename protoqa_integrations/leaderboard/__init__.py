"""The leaderboard of several systems: scores, shared bootstrap resamples, paired tests and rank ranges
(:mod:`.board`), the built record and its tables, plot and model-index (:mod:`.report`), and the
``leaderboard`` and ``convert`` sub-commands (:mod:`.cli`)."""
