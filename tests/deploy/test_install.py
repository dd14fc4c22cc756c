"""scripts/install and scripts/uninstall, run for real into a throwaway root (DESTDIR).

The install is real: a relocatable venv with the locked dependencies and shoe2mqtt built from
this checkout (about a second and a half with uv's cache warm).
"""

from __future__ import annotations

import stat
import subprocess
from typing import TYPE_CHECKING

from tests.deploy.layout import INSTALLED_UNITS, REPO, run_script

if TYPE_CHECKING:
    from pathlib import Path

# path in the root → mode; every one root-owned, since the installer runs as root.
SHIPPED = {
    "opt/shoe2mqtt/bin/shoe2mqtt": 0o755,
    "opt/shoe2mqtt/share/doc/deploy.md": 0o644,
    "opt/shoe2mqtt/share/examples/shoe2mqtt.toml": 0o644,
    f"{INSTALLED_UNITS}/shoe2mqtt.service": 0o644,
    f"{INSTALLED_UNITS}/shoe2mqtt@.service": 0o644,
    f"{INSTALLED_UNITS}/shoe2mqtt-display.service": 0o644,
    f"{INSTALLED_UNITS}/shoe2mqtt-console.service": 0o644,
    "etc/udev/rules.d/70-shoe2mqtt.rules": 0o644,
    "etc/sysusers.d/shoe2mqtt.conf": 0o644,
    "usr/local/share/man/man1/shoe2mqtt.1": 0o644,
    "usr/local/share/bash-completion/completions/shoe2mqtt": 0o644,
    "usr/local/share/zsh/site-functions/_shoe2mqtt": 0o644,
}
SITE_FILES = {  # the site edits these: installed once, kept if edited
    "etc/shoe2mqtt/shoe2mqtt.toml": 0o644,
    "etc/udev/rules.d/69-shoe2mqtt-readers.rules": 0o644,
}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_land_where_the_units_expect_them_with_their_modes(installed: Path) -> None:
    for relative, expected in {**SHIPPED, **SITE_FILES}.items():
        assert mode(installed / relative) == expected, relative
    assert (installed / "etc/shoe2mqtt/shoe2mqtt.toml").read_bytes() == (
        REPO / "examples/shoe2mqtt.toml"
    ).read_bytes()
    assert mode(installed / "etc/shoe2mqtt") == 0o755


def test_nothing_installed_is_world_writable(installed: Path) -> None:
    writable = [
        path
        for path in installed.rglob("*")
        if not path.is_symlink() and path.stat().st_mode & stat.S_IWOTH
    ]
    assert writable == []


def test_the_user_and_group_exist_in_the_root(installed: Path) -> None:
    users = (installed / "etc/passwd").read_text().splitlines()
    groups = (installed / "etc/group").read_text().splitlines()
    user = next(line.split(":") for line in users if line.startswith("shoe2mqtt:"))
    assert user[6] in {"/usr/sbin/nologin", "/sbin/nologin"}  # a system user: no login
    assert int(user[2]) < 1000
    assert any(line.startswith("shoe2mqtt:") for line in groups)


def test_the_installed_command_runs_from_its_venv(installed: Path) -> None:
    result = subprocess.run(  # noqa: S603 - the command just installed, fixed arguments
        [installed / "opt/shoe2mqtt/bin/shoe2mqtt", "asyncapi"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert '"asyncapi": "3.0.0"' in result.stdout


def test_the_command_is_on_the_path_with_its_manual_page_and_completion(installed: Path) -> None:
    """`shoe2mqtt` in /usr/local/bin, `man shoe2mqtt`, and Tab after it in bash, each made
    from the installed argument parser, so every command is in them."""
    from daemon.cli.main import COMMANDS

    link = installed / "usr/local/bin/shoe2mqtt"
    assert link.is_symlink()
    assert str(link.readlink()) == "/opt/shoe2mqtt/bin/shoe2mqtt"  # as / will see it
    manual = subprocess.run(  # noqa: S603 - man on the page just installed
        ["/usr/bin/man", "-l", str(installed / "usr/local/share/man/man1/shoe2mqtt.1")],
        env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    assert manual.startswith("SHOE2MQTT(1)")
    for command in COMMANDS:
        assert f"shoe2mqtt {command.name}\n" in manual, command.name
    for section in ("EXIT STATUS", "FILES", "SEE ALSO"):
        assert f"\n{section}\n" in manual
    completion = installed / "usr/local/share/bash-completion/completions/shoe2mqtt"
    assert _complete(completion, "shoe2mqtt", "") == sorted(c.name for c in COMMANDS)
    assert _complete(completion, "shoe2mqtt", "che") == ["check-config"]
    assert _complete(completion, "shoe2mqtt", "journal", "") == ["export", "list", "show", "verify"]
    assert "--metrics-port" in _complete(completion, "shoe2mqtt", "demo", "--")
    zsh = (installed / "usr/local/share/zsh/site-functions/_shoe2mqtt").read_text()
    assert zsh.startswith("#compdef shoe2mqtt")


def _complete(script: Path, *words: str) -> list[str]:
    """What bash offers for the last of `words`, as Tab would, from the installed script."""
    line = " ".join(f"'{word}'" for word in words)
    program = (
        f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
        'COMPREPLY=(); _shtab_shoe2mqtt; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    printed = subprocess.run(  # noqa: S603 - bash with the completion just installed
        ["/usr/bin/bash", "--norc", "-c", program],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    return sorted(filter(None, printed.splitlines()))


def test_a_second_install_upgrades_and_keeps_the_sites_files(tmp_path: Path) -> None:
    run_script("install", tmp_path)
    config = tmp_path / "etc/shoe2mqtt/shoe2mqtt.toml"
    readers = tmp_path / "etc/udev/rules.d/69-shoe2mqtt-readers.rules"
    config.write_text('[mqtt]\nhost = "broker.floor-2"\n')
    readers.write_text("# this site's readers\n")
    unit = tmp_path / INSTALLED_UNITS / "shoe2mqtt.service"
    unit.write_text("stale")
    second = run_script("install", tmp_path)
    assert config.read_text() == '[mqtt]\nhost = "broker.floor-2"\n'
    assert readers.read_text() == "# this site's readers\n"
    assert f"kept {config}" in second.stdout
    assert unit.read_bytes() == (REPO / "systemd/shoe2mqtt.service").read_bytes()


def test_uninstall_keeps_the_journal_and_edited_config_purge_removes_all(tmp_path: Path) -> None:
    run_script("install", tmp_path)
    journal = tmp_path / "var/lib/shoe2mqtt/journal.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text("{}\n")
    config = tmp_path / "etc/shoe2mqtt/shoe2mqtt.toml"
    config.write_text("# edited\n")

    run_script("uninstall", tmp_path)
    for relative in SHIPPED:
        assert not (tmp_path / relative).exists(), relative
    assert not (tmp_path / "opt/shoe2mqtt").exists()
    # An unedited example goes; an edited file and the journal stay.
    assert not (tmp_path / "etc/udev/rules.d/69-shoe2mqtt-readers.rules").exists()
    assert config.read_text() == "# edited\n"
    assert journal.read_text() == "{}\n"

    run_script("uninstall", tmp_path, "--purge")
    assert not (tmp_path / "etc/shoe2mqtt").exists()
    assert not (tmp_path / "var/lib/shoe2mqtt").exists()


def test_uninstall_of_an_unedited_install_leaves_no_trace_but_the_user(tmp_path: Path) -> None:
    run_script("install", tmp_path)
    run_script("uninstall", tmp_path)
    left = sorted(
        str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if not path.is_dir()
    )
    # The user database stays: the user may own a kept journal (docs/deploy.md, "Uninstall").
    assert left == ["etc/.pwd.lock", "etc/group", "etc/gshadow", "etc/passwd", "etc/shadow"]
