"""Unicode spellings of one answer normalize alike: NFKC, zero-width characters removed.

The spellings a user may paste: combining accents, full-width letters, a zero-width joiner, a
ligature. That they score alike through the command line is checked in tests/protoqa_metric/test_cli.py.
"""

from __future__ import annotations

import unicodedata

from protoqa_core.text import normalize_prediction, normalize_unicode

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")
FULL_WIDTH = "ｃａｆé"
JOINED = "ca\u200dfé"


def test_normalization_function():
    assert normalize_unicode(NFD) == normalize_unicode(NFC) == normalize_unicode(JOINED) == NFC
    assert normalize_prediction(" ＣＡＦÉ ") == NFC
    assert normalize_unicode("ﬁsh") == "fish"  # a ligature
    assert normalize_unicode("plain ascii") == "plain ascii"
