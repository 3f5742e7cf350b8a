"""Run an unmodified pyzmq program on oxmq: ``import zmq`` resolves to oxmq.

Usage (the same forms as ``python`` itself)::

    python -m oxmq.run app.py [args...]
    python -m oxmq.run -m package.module [args...]
    python -m oxmq.run -m zmq.auth.X          # pyzmq's ``python -m zmq.X`` entry points
    python -m oxmq.run -c "import zmq; print(zmq)"

It sets ``OXMQ_AS_ZMQ=1`` for this process and every child it starts (the
``oxmq-as-zmq.pth`` start-up hook installed with oxmq reads it), installs the
alias in this process, and runs the program as ``__main__``. Setting
``OXMQ_AS_ZMQ=1`` yourself does the same for any ``python`` command.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import List, Optional

from oxmq import _zmqhook

_USAGE = "usage: python -m oxmq.run (script.py | -m module | -c code) [args...]"


def main(argv: Optional[List[str]] = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip() if args else _USAGE, file=sys.stderr if not args else sys.stdout)
        raise SystemExit(0 if args else 2)
    os.environ[_zmqhook.ENV_VAR] = "1"
    _zmqhook.install()
    mode = args[0]
    if mode == "-m":
        if len(args) < 2:
            raise SystemExit(_USAGE)
        sys.argv = [args[1]] + args[2:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif mode == "-c":
        if len(args) < 2:
            raise SystemExit(_USAGE)
        sys.argv = ["-c"] + args[2:]
        sys.path.insert(0, "")
        code = compile(args[1], "<string>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
