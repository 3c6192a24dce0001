"""Shared fixtures: where the read-only copies of the public data live; one torch thread; the Hub switched off."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` next to the checkout; tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not available")
    return SHARED_DATA


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run much faster on one thread than on two contended CPU cores.

    Modules that run a model use it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def hub_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The Hub switched off and ``evaluate``'s module cache in ``tmp_path``, for one test.

    Modules that load an ``evaluate`` module use it with
    ``pytestmark = pytest.mark.usefixtures("hub_offline")``.
    """
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
