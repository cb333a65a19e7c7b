"""Heartbeats of these tests live in a directory of their own."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def heartbeat_dir(settings, tmp_path: Path) -> Path:
    settings.HEARTBEAT_STORE = "file"
    settings.HEARTBEAT_DIR = str(tmp_path / "heartbeats")
    return tmp_path / "heartbeats"
