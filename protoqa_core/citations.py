"""BibTeX entries of the two papers, shared by the metric modules, the dataset builder and the cards.

>>> print(PROBEVAL_CITATION.splitlines()[0])
@inproceedings{cheng-etal-2024-every,
"""

__all__ = ["PROTOQA_CITATION", "PROBEVAL_CITATION"]


def _inproceedings(key: str, **fields: str) -> str:
    """One BibTeX ``@inproceedings`` entry, fields in the order given."""
    lines = [f"@inproceedings{{{key},"] + [f'    {name} = "{value}",' for name, value in fields.items()]
    return "\n".join(lines + ["}"]) + "\n"


_ACL = "Association for Computational Linguistics"

PROTOQA_CITATION = _inproceedings(
    "boratko-etal-2020-protoqa",
    title="{P}roto{QA}: A Question Answering Dataset for Prototypical Common-Sense Reasoning",
    author="Boratko, Michael and Li, Xiang and O{'}Gorman, Tim and Das, Rajarshi and Le, Dan and McCallum, Andrew",
    booktitle="Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year="2020",
    publisher=_ACL,
    url="https://aclanthology.org/2020.emnlp-main.85",
    doi="10.18653/v1/2020.emnlp-main.85",
    pages="1122--1136",
)

PROBEVAL_CITATION = _inproceedings(
    "cheng-etal-2024-every",
    title="Every Answer Matters: Evaluating Commonsense with Probabilistic Measures",
    author=(
        "Cheng, Qi and Boratko, Michael and Yelugam, Pranay Kumar and O{'}Gorman, Tim and Singh, Nalini "
        "and McCallum, Andrew and Li, Xiang Lorraine"
    ),
    booktitle="Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics (ACL)",
    year="2024",
    publisher=_ACL,
    eprint="2406.04145",
    archivePrefix="arXiv",
)
