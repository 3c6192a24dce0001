"""A Penn Treebank word tokenizer: the rules of NLTK's ``NLTKWordTokenizer`` (NLTK 3.10).

Importing NLTK costs about a second of CPU, so its rules are written out here, on its engine, the
``regex`` package: :mod:`re` disagrees on which characters are word characters and whitespace
(combining marks, "²", U+001C..U+001F), which decide where an apostrophe splits. A test compares
both tokenizers on every answer string of the data and on generated strings.
"""

from __future__ import annotations

import regex

__all__ = ["treebank_tokens"]

_Rule = tuple["regex.Pattern[str]", str]

# Opening quotes: guillemets and curly quotes stand apart, a leading straight double
# quote becomes ``, and an apostrophe opening a word (not a clitic) is split off.
_STARTING_QUOTES: tuple[_Rule, ...] = (
    (regex.compile("([«“‘„]|[`]+)"), r" \1 "),
    (regex.compile(r'^"'), r"``"),
    (regex.compile(r"(``)"), r" \1 "),
    (regex.compile(r"""([ (\[{<])("|'{2})"""), r"\1 `` "),
    (regex.compile(r"(?i)(?<!\w)(')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)"), r"\1 "),
)

_PUNCTUATION: tuple[_Rule, ...] = (
    (regex.compile(r"""([^.])(\.)([\])}>"'»”’ ]*+)\s*$"""), r"\1 \2 \3 "),
    (regex.compile(r"([:,])([^\d])"), r" \1 \2"),
    (regex.compile(r"([:,])$"), r" \1 "),
    (regex.compile(r"\.{2,}"), r" \g<0> "),
    (regex.compile(r"[;@#$%&]"), r" \g<0> "),
    (regex.compile("[\u2012-\u2015]"), r" \g<0> "),  # figure, en and em dashes, horizontal bar
    (regex.compile(r"""([^.])(\.)([\])}>"']*)\s*$"""), r"\1 \2\3 "),
    (regex.compile(r"[?!]"), r" \g<0> "),
    (regex.compile(r"([^'])' "), r"\1 ' "),
    (regex.compile(r"[*]"), r" \g<0> "),
)

_PARENS_BRACKETS: _Rule = (regex.compile(r"[\][(){}<>]"), r" \g<0> ")
_DOUBLE_DASHES: _Rule = (regex.compile(r"--"), r" -- ")

_ENDING_QUOTES: tuple[_Rule, ...] = (
    (regex.compile("([»”’])"), r" \1 "),
    (regex.compile(r"''"), " '' "),
    (regex.compile(r'"'), " '' "),
    (regex.compile(r"\s+"), " "),
    (regex.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (regex.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
)

# Robert MacIntyre's contractions, split in two: "cannot" -> "can not".
_CONTRACTIONS: tuple[regex.Pattern[str], ...] = tuple(
    regex.compile(pattern)
    for pattern in (
        r"(?i)\b(can)(not)\b",
        r"(?i)\b(d)('ye)\b",
        r"(?i)\b(gim)(me)\b",
        r"(?i)\b(gon)(na)\b",
        r"(?i)\b(got)(ta)\b",
        r"(?i)\b(lem)(me)\b",
        r"(?i)\b(more)('n)\b",
        r"(?i)\b(wan)(na)(?=\s)",
        r"(?i) ('t)(is)\b",
        r"(?i) ('t)(was)\b",
    )
)


def treebank_tokens(text: str) -> list[str]:
    """The Treebank word tokens of ``text``, as NLTK's ``NLTKWordTokenizer().tokenize``.

    >>> treebank_tokens("I cannot say, \\"don't\\" (ok)...")
    ['I', 'can', 'not', 'say', ',', '``', 'do', "n't", "''", '(', 'ok', ')', '...']
    """
    for pattern, replacement in (*_STARTING_QUOTES, *_PUNCTUATION, _PARENS_BRACKETS, _DOUBLE_DASHES):
        text = pattern.sub(replacement, text)
    text = " " + text + " "
    for pattern, replacement in _ENDING_QUOTES:
        text = pattern.sub(replacement, text)
    for pattern in _CONTRACTIONS:
        text = pattern.sub(r" \1 \2 ", text)
    return text.split()
