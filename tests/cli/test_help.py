"""``judge --help`` lists every command once, under its panel, panels in their order."""

from __future__ import annotations

from _cli import judge
from reljudge.cli.deferred import PANELS


def test_help_groups_the_commands_under_panels():
    ran = judge("--help")
    assert ran.returncode == 0
    text = ran.stdout
    positions = [text.index(f"\n{panel}:\n") for panel in PANELS]
    assert positions == sorted(positions)
    assert "\nCommands:" not in text  # every command has its panel
    judge_part = text[positions[0] : positions[1]]
    assert "  demo " in judge_part and "  run " in judge_part
    tools = text[positions[-1] :]
    assert "  doctor " in tools and "  mock-server " in tools
    listed = [line.split()[0] for line in text.splitlines() if line.startswith("  ") and line.split()]
    assert len(listed) == len(set(listed))
