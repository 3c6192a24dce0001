"""The one row schema shared by every config, the builder, the export and the metric.

``clusters`` (and alike, ``raw_answers``) is a ``datasets.Sequence`` over a dict, stored as a dict of lists:
``{"id": [str], "answers": [[str]], "count": [int]}``, the reference format of the ``protoqa`` metric.

>>> sorted(FEATURES)
['clusters', 'id', 'num_answers', 'question', 'question_original', 'raw_answers', 'source']
"""

from __future__ import annotations

import datasets

__all__ = ["FEATURES", "COLUMNS"]

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "question": datasets.Value("string"),
        "question_original": datasets.Value("string"),
        "source": datasets.Value("string"),
        "raw_answers": datasets.Sequence({"answer": datasets.Value("string"), "count": datasets.Value("int64")}),
        # Same declaration as the metric's reference feature (protoqa_metric/evaluate_modules/protoqa/protoqa.py).
        "clusters": datasets.Sequence(
            {
                "id": datasets.Value("string"),
                "answers": datasets.Sequence(datasets.Value("string")),
                "count": datasets.Value("int64"),
            }
        ),
        "num_answers": datasets.Value("int64"),
    }
)

COLUMNS: tuple[str, ...] = tuple(FEATURES)
