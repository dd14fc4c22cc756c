"""One reader of a password file (daemon.mqtt.secret), for the daemon's broker password and
the pit display's: the same password from the same file, the same words for the same
mistake, each naming who may not read it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from daemon.configuration.file import ConfigErrors
from daemon.display.config import load_display_config
from daemon.mqtt.errors import MqttSettingsError
from daemon.mqtt.secret import Secret, UnreadableSecret, read_secret_file
from daemon.mqtt.settings import MqttSettings

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("content", "password"),
    [
        (b"s3cret", "s3cret"),
        (b"s3cret\n", "s3cret"),  # echo's newline
        (b"s3cret\r\n", "s3cret"),  # an editor's on another system
        (b"s3cret\n\n", "s3cret\n"),  # one line ending, never more
        (b" two words \n", " two words "),  # spaces are the password's own
    ],
)
def test_the_password_is_the_file_less_one_line_ending(
    tmp_path: Path, content: bytes, password: str
) -> None:
    path = tmp_path / "password"
    path.write_bytes(content)
    assert read_secret_file(path, reader="the daemon") == Secret(password)


def _problems(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "empty").write_bytes(b"\n")
    (tmp_path / "latin-1").write_bytes("café".encode("latin-1"))
    (tmp_path / "a-directory").mkdir()
    return {
        "no such file: '{}'": tmp_path / "missing",
        "no such file: '{}'.": tmp_path / "a-directory",
        "'{}' is empty": tmp_path / "empty",
        "cannot read '{}': not UTF-8 text": tmp_path / "latin-1",
    }


def test_a_file_that_gives_no_password_is_refused_with_its_reason(tmp_path: Path) -> None:
    for wording, path in _problems(tmp_path).items():
        with pytest.raises(UnreadableSecret) as caught:
            read_secret_file(path, reader="the display")
        assert caught.value.reason == wording.rstrip(".").format(path)
        assert caught.value.path == path


def test_the_daemon_and_the_display_word_the_same_file_alike(tmp_path: Path) -> None:
    """The same mistake beside each one's field, from the one reader."""
    for wording, path in _problems(tmp_path).items():
        expected = wording.rstrip(".").format(path)
        with pytest.raises(MqttSettingsError) as daemon:
            MqttSettings.from_mapping(
                {"host": "127.0.0.1", "username": "pit-a", "password_file": str(path)}
            )
        assert [(p.field, p.message) for p in daemon.value.problems] == [
            ("mqtt.password_file", expected)
        ]
        config = tmp_path / "display.toml"
        config.write_text(
            '[mqtt]\nhost = "127.0.0.1"\n[display]\nusername = "display"\n'
            f'password_file = "{path}"\n',
            encoding="utf-8",
        )
        with pytest.raises(ConfigErrors) as display:
            load_display_config(config, environ={})
        assert [str(e) for e in display.value.errors] == [
            f"{config}:5: display.password_file: {expected}"
        ]
