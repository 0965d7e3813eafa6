"""
Run a TrustGraph program as a child of the test process, and end it when the test process goes away.

Usage: python child.py COMMAND|SCRIPT.py [ARGS...]
  COMMAND    a console script of the venv (e.g. mcp-tool, no-auth-svc), run through its entry point
  SCRIPT.py  a Python file, run as __main__ (e.g. api_gateway.py)

TrustGraph's processors retry for ever when their broker goes away, so a test run that dies without
stopping them would leave them running. The test keeps this process's stdin open; when it closes (the test
process exited, however it exited), this process exits too.
"""

import os
import runpy
import sys
import threading
from importlib.metadata import entry_points


def exit_when_parent_goes():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        raise SystemExit(64)
    threading.Thread(target=exit_when_parent_goes, name="parent-watch", daemon=True).start()
    target, args = sys.argv[1], sys.argv[2:]
    if target.endswith(".py"):
        sys.argv = [target, *args]
        runpy.run_path(target, run_name="__main__")
        return
    found = entry_points(group="console_scripts", name=target)
    if not found:
        raise SystemExit(f"child.py: no console script {target!r} in this venv")
    sys.argv = [target, *args]
    sys.exit(next(iter(found)).load()())


if __name__ == "__main__":
    main()
