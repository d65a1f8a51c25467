"""``tokens``: one resume token per server URL, in a file only its owner can read."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from qiuqiu.cli import tokens
from qiuqiu.cli.errors import TokenNotSaved
from qiuqiu.cli.tokens import TokenFile

HERE = "ws://127.0.0.1:8765"
THERE = "wss://qiuqiu.example/ws"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- saving and loading -------------------------------------------------------------------------


def test_a_server_with_no_token_loads_none(tmp_path: Path) -> None:
    assert TokenFile(tmp_path).load(HERE) is None


def test_a_saved_token_loads_for_its_server(tmp_path: Path) -> None:
    TokenFile(tmp_path).save(HERE, "tok-1")
    assert TokenFile(tmp_path).load(HERE) == "tok-1"


def test_two_servers_keep_their_own_tokens(tmp_path: Path) -> None:
    file = TokenFile(tmp_path)
    file.save(HERE, "tok-here")
    file.save(THERE, "tok-there")
    assert (file.load(HERE), file.load(THERE)) == ("tok-here", "tok-there")


def test_a_token_for_one_server_is_not_given_to_another(tmp_path: Path) -> None:
    TokenFile(tmp_path).save(HERE, "tok-here")
    assert TokenFile(tmp_path).load(THERE) is None


def test_saving_again_replaces_that_servers_token_only(tmp_path: Path) -> None:
    file = TokenFile(tmp_path)
    file.save(HERE, "old")
    file.save(THERE, "other")
    file.save(HERE, "new")
    assert json.loads(file.path.read_text()) == {HERE: "new", THERE: "other"}


def test_saving_makes_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    TokenFile(folder).save(HERE, "tok")
    assert (folder / "tokens.json").is_file()


def test_the_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    file = TokenFile(tmp_path)
    file.save(HERE, "tok")
    assert mode(file.path) == 0o600
    file.save(THERE, "tok-2")
    assert mode(file.path) == 0o600


def test_saving_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    TokenFile(tmp_path).save(HERE, "tok")
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.json"]


def test_a_stale_temporary_file_does_not_widen_the_files_mode(tmp_path: Path) -> None:
    stale = tmp_path / "tokens.tmp"
    stale.write_text("left by a crash")
    stale.chmod(0o644)
    file = TokenFile(tmp_path)
    file.save(HERE, "tok")
    assert file.load(HERE) == "tok"
    assert mode(file.path) == 0o600


def test_a_folder_that_cannot_be_made_is_a_token_not_saved_naming_the_file(
    tmp_path: Path,
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    file = TokenFile(a_file / "qiuqiu")
    with pytest.raises(TokenNotSaved, match=r"cannot keep this account's token in .*: Not a dir"):
        file.save(HERE, "tok")


# -- a damaged file ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("{not json", id="corrupt"),
        pytest.param("", id="empty"),
        pytest.param('["tok"]', id="a-list"),
        pytest.param('"tok"', id="a-string"),
        pytest.param("null", id="null"),
    ],
)
def test_a_damaged_file_reads_as_empty_and_is_set_aside_for_a_new_one(
    tmp_path: Path, content: str
) -> None:
    file = TokenFile(tmp_path)
    file.path.write_text(content)
    file.path.chmod(0o644)
    assert file.load(HERE) is None
    aside = file.save(HERE, "tok")
    assert aside is not None
    assert aside.parent == tmp_path
    assert aside.name.startswith("tokens.json.damaged-")
    assert aside.read_text() == content
    assert mode(aside) == 0o600
    assert json.loads(file.path.read_text()) == {HERE: "tok"}
    assert mode(file.path) == 0o600


def test_a_second_damaged_file_is_set_aside_beside_the_first(tmp_path: Path) -> None:
    file = TokenFile(tmp_path)
    file.path.write_text('{"ws://other:1": "tok", bad')
    first = file.save(HERE, "tok")
    file.path.write_text("{also bad")
    second = file.save(HERE, "tok")
    assert first is not None
    assert second is not None
    assert (first.read_text(), second.read_text()) == ('{"ws://other:1": "tok", bad', "{also bad")


def test_a_readable_file_is_not_set_aside(tmp_path: Path) -> None:
    file = TokenFile(tmp_path)
    assert file.save(HERE, "tok") is None
    assert file.save(THERE, "tok-2") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens.json"]


def test_a_token_that_is_not_text_loads_as_none(tmp_path: Path) -> None:
    file = TokenFile(tmp_path)
    file.path.write_text(json.dumps({HERE: 42, THERE: "tok"}))
    assert file.load(HERE) is None
    assert file.load(THERE) == "tok"


def test_a_folder_where_the_file_belongs_is_a_token_not_saved_and_left_as_it_is(
    tmp_path: Path,
) -> None:
    """Never set aside as a damaged file would be: that moved the folder, and all in it,
    to another name, readable by nobody (0o600 on a folder)."""
    folder = tmp_path / "tokens.json"
    folder.mkdir()
    (folder / "my_bot.py").write_text("mine")
    file = TokenFile(tmp_path)
    assert file.load(HERE) is None
    with pytest.raises(TokenNotSaved, match=r"token in .*tokens.json: it is a folder, not a file"):
        file.save(HERE, "tok")
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.json"]
    assert mode(folder) == 0o755
    assert (folder / "my_bot.py").read_text() == "mine"


# -- where the file lives ----------------------------------------------------------------------


def test_the_qiuqiu_config_dir_comes_first() -> None:
    environ = {"QIUQIU_CONFIG_DIR": "/opt/qq", "XDG_CONFIG_HOME": "/xdg"}
    assert tokens.config_dir(environ) == Path("/opt/qq")


def test_the_xdg_config_home_comes_next() -> None:
    assert tokens.config_dir({"XDG_CONFIG_HOME": "/xdg"}) == Path("/xdg/qiuqiu")


def test_without_either_the_folder_is_in_the_home_config() -> None:
    assert tokens.config_dir({}) == Path.home() / ".config" / "qiuqiu"


def test_an_empty_variable_counts_as_unset() -> None:
    environ = {"QIUQIU_CONFIG_DIR": "", "XDG_CONFIG_HOME": "/xdg"}
    assert tokens.config_dir(environ) == Path("/xdg/qiuqiu")
    assert tokens.config_dir({"XDG_CONFIG_HOME": ""}) == Path.home() / ".config" / "qiuqiu"
