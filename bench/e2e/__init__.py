"""End-to-end benchmarks: the daemon as a process, a real broker, emulated shoes on ptys.

uv run python -m bench.e2e.goals      # the goals, open loop: one line each, PASS/MISS
uv run python -m bench.e2e.openloop   # one open-loop run: the daemon beside its baselines
uv run python -m bench.e2e.latency    # closed loop: card-to-settlement latency, and a bare relay's
uv run python -m bench.e2e.scale      # closed loop: 1, 8, 32, 64 shoes in one daemon
uv run python -m bench.e2e.memory     # closed loop: resident memory over a long run
uv run python -m bench.e2e.startup    # process start to READY=1 over a large journal
"""
