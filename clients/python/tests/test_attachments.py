"""Attachments of a foreign MCAP (written by the official Python writer, fixtures/foreign/mcap/json.mcap): listed
and read byte for byte, from the file (the mcap library) and through the server (``GET …/attachments/{index}``)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import vlink_bag
from vlink_bag import NotFound

from .conftest import REPO, start_server

FIXTURE = REPO / "fixtures" / "foreign" / "mcap" / "json.mcap"
EXPECTED = json.loads(FIXTURE.with_name("json.mcap.expected.json").read_text())["attachments"]


def listed(attachments: list[dict]) -> list[tuple]:
    return [(a["index"], a["name"], a["mediaType"], a["logTime"], a["createTime"], a["size"]) for a in attachments]


WANT = [(i, a["name"], a["media_type"], a["log_time_ns"], a["create_time_ns"], a["size"]) for i, a in enumerate(EXPECTED)]


def check(bag: vlink_bag.BagBase) -> None:
    assert listed(bag.attachments()) == WANT
    for i, a in enumerate(EXPECTED):
        assert hashlib.sha256(bag.attachment(i)).hexdigest() == a["sha256"]
    with pytest.raises(NotFound):
        bag.attachment(len(EXPECTED))


def test_local_attachments() -> None:
    with vlink_bag.open(FIXTURE) as bag:
        check(bag)


def test_remote_attachments(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(FIXTURE, root / "json.mcap")
    server = start_server(root, tmp_path)
    try:
        with vlink_bag.Client(server.url) as client:
            check(client.bag("json.mcap"))
    finally:
        server.stop()


def test_formats_without_attachments_list_none(tmp_path: Path) -> None:
    path = tmp_path / "plain.vcap"
    with vlink_bag.Writer(path) as writer:
        writer.write("/a", b"x", timestamp=0)
    with vlink_bag.open(path) as bag:
        assert bag.attachments() == []
