"""Uploading an export folder, without the network: the checks that refuse a folder stock
``load_dataset`` could not read, the plan of what would be sent where, and the two Hub calls,
made on a recording client that sends nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.lazy import lazy_import

upload = lazy_import("protoqa_dataset.upload")  # imports huggingface_hub
huggingface_hub = lazy_import("huggingface_hub")

CARD = """---
license: cc-by-4.0
configs:
- config_name: protoqa
  default: true
  data_files:
  - split: validation
    path: protoqa/validation-00000-of-00001.parquet
  - split: test
    path:
    - protoqa/test-00000-of-00002.parquet
    - protoqa/test-00001-of-00002.parquet
- config_name: cfc
  data_files:
  - split: test
    path: cfc/test-00000-of-00001.parquet
---
# ProtoQA and CFC
"""

DATA_FILES = [
    "cfc/test-00000-of-00001.parquet",
    "protoqa/test-00000-of-00002.parquet",
    "protoqa/test-00001-of-00002.parquet",
    "protoqa/validation-00000-of-00001.parquet",
]


@pytest.fixture()
def export(tmp_path) -> Path:
    """An export folder as ``export_dataset`` lays it out (a card and its Parquet files), with the
    folders a git clone or the Hub client would add beside them."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "README.md").write_text(CARD, encoding="utf-8")
    for i, name in enumerate(DATA_FILES):
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_bytes(b"x" * (10 + i))
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (folder / ".cache" / "huggingface").mkdir(parents=True)
    (folder / ".cache" / "huggingface" / "upload.lock").write_text("", encoding="utf-8")
    return folder


def recording_api():
    """An HfApi whose two network calls are recorded instead of sent (huggingface_hub imported here)."""

    class RecordingApi(huggingface_hub.HfApi):
        def __init__(self):
            super().__init__(token=False)
            self.calls = []

        def create_repo(self, repo_id, **kwargs):
            self.calls.append(("create_repo", repo_id, kwargs))

        def upload_folder(self, **kwargs):
            self.calls.append(("upload_folder", kwargs["repo_id"], kwargs))

    return RecordingApi()


def test_upload_sends_the_folder_as_a_dataset_repo(export):
    api = recording_api()
    plan = upload.upload_export(export, "someone/protoqa", api=api, private=True)
    (create, repo_id, create_kwargs), (send, upload_repo, upload_kwargs) = api.calls
    assert (create, repo_id, send, upload_repo) == (
        "create_repo",
        "someone/protoqa",
        "upload_folder",
        "someone/protoqa",
    )
    assert create_kwargs["repo_type"] == "dataset" and create_kwargs["exist_ok"] and create_kwargs["private"]
    assert upload_kwargs["repo_type"] == "dataset"
    assert Path(upload_kwargs["folder_path"]) == export
    assert upload_kwargs["delete_patterns"] == ["*.parquet"]
    sent = [path for path, _ in plan.files]
    assert sent == sorted(["README.md", *DATA_FILES])


def test_upload_refuses_folders_that_would_not_load(export, tmp_path):
    with pytest.raises(ValueError, match="no README.md"):
        upload.plan_upload(tmp_path / "empty", "someone/protoqa")
    broken = tmp_path / "broken"
    shutil.copytree(export, broken)
    (broken / "cfc" / "test-00000-of-00001.parquet").unlink()
    with pytest.raises(ValueError, match="config 'cfc' split 'test' names cfc/test-00000-of-00001.parquet"):
        upload.plan_upload(broken, "someone/protoqa")
    (broken / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# card\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no `configs:`"):
        upload.plan_upload(broken, "someone/protoqa")
    with pytest.raises(ValueError, match="owner/name"):
        upload.plan_upload(export, "protoqa")


# --- the plan ----------------------------------------------------------------------------------


def test_the_plan_lists_what_would_be_sent_and_leaves_out_git_and_the_hub_cache(export):
    plan = upload.plan_upload(export, "someone/protoqa")
    assert plan.files == (
        ("README.md", len(CARD.encode())),
        ("cfc/test-00000-of-00001.parquet", 10),
        ("protoqa/test-00000-of-00002.parquet", 11),
        ("protoqa/test-00001-of-00002.parquet", 12),
        ("protoqa/validation-00000-of-00001.parquet", 13),
    )
    assert plan.configs == ("protoqa", "cfc") and plan.repo_type == "dataset" and plan.private is None
    assert plan.commit_message == "Upload ProtoQA/CFC export" and plan.delete_patterns == ("*.parquet",)


def test_the_plan_describes_the_destination_and_every_file(export):
    text = upload.plan_upload(export, "someone/protoqa", commit_message="Refresh").describe()
    assert text.splitlines() == [
        f"upload {export} -> https://huggingface.co/datasets/someone/protoqa (repo_type=dataset)",
        "configs: protoqa, cfc",
        "commit: Refresh",
        "remote files matching *.parquet that are not in the folder will be deleted",
        f"{len(CARD.encode()):>10}  README.md",
        "        10  cfc/test-00000-of-00001.parquet",
        "        11  protoqa/test-00000-of-00002.parquet",
        "        12  protoqa/test-00001-of-00002.parquet",
        "        13  protoqa/validation-00000-of-00001.parquet",
    ]


def test_one_missing_file_of_a_sharded_split_is_named(export):
    (export / "protoqa" / "test-00001-of-00002.parquet").unlink()
    with pytest.raises(ValueError) as error:
        upload.plan_upload(export, "someone/protoqa")
    assert str(error.value) == (
        f"{export / 'README.md'}: config 'protoqa' split 'test' names protoqa/test-00001-of-00002.parquet, "
        f"which is not in {export}"
    )


def test_a_link_to_a_file_outside_the_folder_is_never_sent(export, tmp_path):
    # The Hub client reads through links: a planted one would publish whatever it points to.
    secret = tmp_path / "secret.txt"
    secret.write_text("token", encoding="utf-8")
    (export / "notes.txt").symlink_to(secret)
    with pytest.raises(ValueError) as error:
        upload.plan_upload(export, "someone/protoqa")
    assert str(error.value) == (
        f"{export / 'notes.txt'} links to {secret}, outside {export}; an upload sends only the folder's files"
    )
    (export / "notes.txt").unlink()
    (export / "cfc" / "copy.parquet").symlink_to(export / "cfc" / "test-00000-of-00001.parquet")
    assert ("cfc/copy.parquet", 10) in upload.plan_upload(export, "someone/protoqa").files  # inside: sent


@pytest.mark.parametrize("repo_id", ["protoqa", "a/b/c", "/protoqa", "someone/", ""])
def test_a_repo_id_that_is_not_owner_slash_name_is_refused_before_the_folder_is_read(repo_id, tmp_path):
    with pytest.raises(ValueError) as error:
        upload.plan_upload(tmp_path / "no-folder", repo_id)
    assert str(error.value) == f"repo id must look like 'owner/name', got {repo_id!r}"


# --- the Hub calls -------------------------------------------------------------------------------


def test_a_dry_run_creates_no_client(export, monkeypatch):
    def no_client(*args, **kwargs):
        raise AssertionError("a dry run must not create an HfApi")

    monkeypatch.setattr("protoqa_dataset.upload.HfApi", no_client)
    plan = upload.upload_export(export, "someone/protoqa", dry_run=True, private=False)
    assert plan == upload.plan_upload(export, "someone/protoqa", private=False)


def test_the_client_gets_the_token_the_visibility_and_the_message(export):
    api = recording_api()
    upload.upload_export(export, "someone/protoqa", api=api, token="hf_x", commit_message="Refresh")
    (_, _, create_kwargs), (_, _, upload_kwargs) = api.calls
    assert create_kwargs == {"repo_type": "dataset", "private": None, "exist_ok": True, "token": "hf_x"}
    assert upload_kwargs == {
        "repo_id": "someone/protoqa",
        "folder_path": str(export),
        "repo_type": "dataset",
        "commit_message": "Refresh",
        "delete_patterns": ["*.parquet"],
        "token": "hf_x",
    }


def test_a_folder_that_fails_its_checks_reaches_no_client(export):
    (export / "README.md").unlink()
    api = recording_api()
    with pytest.raises(ValueError, match="no README.md; create it with `python -m protoqa_dataset export"):
        upload.upload_export(export, "someone/protoqa", api=api)
    assert api.calls == []
