"""The shared foundation of protoqa-eval: reading data, text normalization, WordNet access,
similarities, signatures, significance, ranking, data location and the command lines (:mod:`.cli`).

Both metrics (:mod:`protoqa_metric`, :mod:`cfc_probeval`) and the dataset package
(:mod:`protoqa_dataset`) stand on this package; it imports none of them (ARCHITECTURE.md).

>>> from protoqa_core import __version__
>>> isinstance(__version__, str)
True
"""

__version__ = "0.1.0"
