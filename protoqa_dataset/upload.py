"""Upload an export folder to a Hugging Face Hub dataset repository.

The folder is checked, then sent with one ``upload_folder`` call that also deletes the repository's Parquet
files the export no longer has, so a stale split never lingers next to a fresh card.

>>> plan = upload_export("/tmp/protoqa-export", "me/protoqa", dry_run=True)  # doctest: +SKIP
>>> print(plan.describe())  # doctest: +SKIP
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from huggingface_hub import DatasetCard, HfApi
from huggingface_hub.utils import DEFAULT_IGNORE_PATTERNS, filter_repo_objects

__all__ = ["UploadPlan", "plan_upload", "upload_export"]

PathLike = Union[str, os.PathLike]

REPO_TYPE = "dataset"
# Stale shards from an earlier export are removed; everything else in the repo stays.
DELETE_PATTERNS = ["*.parquet"]


@dataclass(frozen=True)
class UploadPlan:
    """Everything an upload will send (``files``: sorted (relative path, size)), for a dry run or for the record."""

    folder: Path
    repo_id: str
    repo_type: str
    files: tuple[tuple[str, int], ...]
    configs: tuple[str, ...]
    private: Optional[bool]
    commit_message: str
    delete_patterns: tuple[str, ...]

    def describe(self) -> str:
        """Multi-line listing of what would be sent where.

        >>> print(UploadPlan(Path("out"), "me/protoqa", "dataset", (("README.md", 10),), ("cfc",), None, "m", ("*.parquet",)).describe())
        upload out -> https://huggingface.co/datasets/me/protoqa (repo_type=dataset)
        configs: cfc
        commit: m
        remote files matching *.parquet that are not in the folder will be deleted
                10  README.md
        """
        lines = [
            f"upload {self.folder} -> https://huggingface.co/datasets/{self.repo_id} (repo_type={self.repo_type})",
            f"configs: {', '.join(self.configs)}",
            f"commit: {self.commit_message}",
            f"remote files matching {', '.join(self.delete_patterns)} that are not in the folder will be deleted",
        ]
        lines += [f"{size:>10}  {path}" for path, size in self.files]
        return "\n".join(lines)


def _check_repo_id(repo_id: str) -> None:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"repo id must look like 'owner/name', got {repo_id!r}")


def plan_upload(
    folder: PathLike, repo_id: str, *, private: Optional[bool] = None, commit_message: str = "Upload ProtoQA/CFC export"
) -> UploadPlan:
    """Check an export folder and describe the upload, without any network access.

    ``ValueError`` when the folder is not a loadable export (a card with ``configs:`` whose files all exist), or a
    file to send links outside the folder, which would publish it.

    >>> plan_upload("/tmp/protoqa-export", "me/protoqa").configs  # doctest: +SKIP
    ('protoqa', 'protoqa_scraped_dev', 'cfc')
    """
    _check_repo_id(repo_id)
    folder = Path(folder)
    readme = folder / "README.md"
    if not readme.is_file():
        raise ValueError(f"{folder} has no README.md; create it with `python -m protoqa_dataset export {folder}`")
    metadata = DatasetCard.load(readme).data.to_dict()
    configs = metadata.get("configs")
    if not configs:
        raise ValueError(f"{readme} has no `configs:` in its YAML header, so load_dataset could not find the data")
    for entry in configs:
        for data_file in entry.get("data_files", []):
            paths = data_file["path"] if isinstance(data_file["path"], list) else [data_file["path"]]
            for path in paths:
                if not (folder / path).is_file():
                    raise ValueError(
                        f"{readme}: config {entry['config_name']!r} split {data_file['split']!r} "
                        f"names {path}, which is not in {folder}"
                    )
    # The same filter upload_folder applies, so the listing is what will be sent.
    present = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    files = tuple(
        sorted((path, present[path]) for path in filter_repo_objects(present, ignore_patterns=DEFAULT_IGNORE_PATTERNS))
    )
    root = folder.resolve()
    for path, _ in files:
        target = (folder / path).resolve()
        if not target.is_relative_to(root):
            raise ValueError(
                f"{folder / path} links to {target}, outside {folder}; an upload sends only the folder's files"
            )
    return UploadPlan(
        folder=folder,
        repo_id=repo_id,
        repo_type=REPO_TYPE,
        files=files,
        configs=tuple(entry["config_name"] for entry in configs),
        private=private,
        commit_message=commit_message,
        delete_patterns=tuple(DELETE_PATTERNS),
    )


def upload_export(
    folder: PathLike,
    repo_id: str,
    *,
    dry_run: bool = False,
    private: Optional[bool] = None,
    token: Optional[str] = None,
    commit_message: str = "Upload ProtoQA/CFC export",
    api: Optional[HfApi] = None,
) -> UploadPlan:
    """Create the dataset repository if needed and upload the export folder (``dry_run``: only the plan, no network).

    >>> upload_export("/tmp/protoqa-export", "me/protoqa")  # doctest: +SKIP
    """
    plan = plan_upload(folder, repo_id, private=private, commit_message=commit_message)
    if dry_run:
        return plan
    api = api or HfApi()
    api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True, token=token)
    api.upload_folder(
        repo_id=repo_id,
        folder_path=str(plan.folder),
        repo_type=REPO_TYPE,
        commit_message=commit_message,
        delete_patterns=list(DELETE_PATTERNS),
        token=token,
    )
    return plan
