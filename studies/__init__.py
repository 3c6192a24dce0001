"""Research studies run from the checkout (not installed): ProbEval's agreement study and
leaderboard (``python -m studies.validation``) and the paper example
(``python -m studies.paper_example``). Their outputs are in ``studies/reports/``.
"""
