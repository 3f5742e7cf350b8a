"""The supported way to run unmodified pyzmq programs on oxmq: ``import zmq``
resolves to oxmq only when asked (OXMQ_AS_ZMQ=1 or ``python -m oxmq.run``),
in child processes too, and for ``python -m zmq.X``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PY = sys.executable


def run(args, env_extra=None, **kw):
    env = dict(os.environ)
    env.pop("OXMQ_AS_ZMQ", None)
    env.update(env_extra or {})
    return subprocess.run([PY] + args, env=env, capture_output=True, text=True, timeout=60, **kw)


def real_pyzmq_installed() -> bool:
    p = run(["-c", "import zmq; print(zmq.__name__)"])
    return p.returncode == 0 and p.stdout.strip() == "zmq"


def test_not_shadowing_without_asking():
    # pyzmq is installed next to oxmq in the test venv: it stays itself
    if not real_pyzmq_installed():
        pytest.skip("real pyzmq not installed")
    p = run(["-c", "import zmq; print(zmq.__name__, hasattr(zmq, 'backend'))"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[0] == "zmq"


@pytest.mark.parametrize("value", ["0", ""])
def test_env_var_off_values(value):
    if not real_pyzmq_installed():
        pytest.skip("real pyzmq not installed")
    p = run(["-c", "import zmq; print(zmq.__name__)"], {"OXMQ_AS_ZMQ": value})
    assert p.stdout.strip() == "zmq"


def test_env_var_makes_zmq_oxmq_with_submodules():
    code = textwrap.dedent(
        """
        import zmq, zmq.asyncio, zmq.eventloop.zmqstream, zmq.auth.thread
        import oxmq, oxmq.asyncio
        assert zmq is oxmq and zmq.asyncio is oxmq.asyncio
        assert zmq.Context is oxmq.Context
        from zmq.sugar.socket import Socket
        assert Socket is oxmq.Socket
        print("ok", zmq.__name__)
        """
    )
    p = run(["-c", code], {"OXMQ_AS_ZMQ": "1"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok oxmq"


def test_missing_module_is_an_import_error_not_pyzmq():
    p = run(["-c", "import zmq.no_such_module"], {"OXMQ_AS_ZMQ": "1"})
    assert p.returncode != 0
    assert "ModuleNotFoundError" in p.stderr


def test_run_script_and_child_process(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(
        textwrap.dedent(
            """
            import subprocess, sys
            import zmq
            child = subprocess.run([sys.executable, "-c", "import zmq; print(zmq.__name__)"],
                                   capture_output=True, text=True, check=True)
            print(zmq.__name__, child.stdout.strip(), sys.argv[1:], __name__)
            """
        )
    )
    p = run(["-m", "oxmq.run", str(app), "a", "b"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "oxmq oxmq ['a', 'b'] __main__"


def test_run_module_zmq_x():
    # pyzmq's own entry point, through the alias
    p = run(["-m", "oxmq.run", "-m", "zmq.curve_keygen", "--json"])
    assert p.returncode == 0, p.stderr
    assert '"public"' in p.stdout
    p = run(["-m", "zmq.curve_keygen", "--json"], {"OXMQ_AS_ZMQ": "1"})
    assert p.returncode == 0, p.stderr
    assert '"secret"' in p.stdout


def test_run_code():
    p = run(["-m", "oxmq.run", "-c", "import zmq, sys; print(zmq.__name__, sys.argv[1:])", "x"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "oxmq ['x']"
