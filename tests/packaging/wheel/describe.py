"""Print what `make wheel` built: each wheel's size and the Pythons it covers,
and fail if one lacks what the package ships (the extension module, the C ABI
files of python-capi) or needs a libsodium the user would have to install."""

import sys
import zipfile
from pathlib import Path

REQUIRED = ("oxmq/__init__.py", "oxmq/include/zmq.h", "oxmq/_capi/zmq/libzmq.so.5")


def covers(tag_python: str, tag_abi: str) -> str:
    version = tag_python.removeprefix("cp")
    dotted = f"{version[0]}.{version[1:]}"
    return f"CPython {dotted} and later 3.x (stable ABI)" if tag_abi == "abi3" else f"CPython {dotted}"


def main(dist: Path) -> int:
    wheels = sorted(dist.glob("oxmq-*.whl"))
    if not wheels:
        print(f"make wheel: no wheel in {dist}", file=sys.stderr)
        return 1
    bad = 0
    print(f"==> wheels in {dist}:")
    for w in wheels:
        _name, _version, py, abi, plat = w.name[:-4].split("-")
        with zipfile.ZipFile(w) as z:
            names = z.namelist()
            ext = [n for n in names if n.startswith("oxmq/_oxmq") and n.endswith(".so")]
            unpacked = sum(i.file_size for i in z.infolist())
            missing = [n for n in REQUIRED if n not in names] + ([] if ext else ["oxmq/_oxmq*.so"])
            needs_sodium = any(b"libsodium.so" in z.read(n) for n in ext)
        print(f"    {w.name}: {w.stat().st_size / 2**20:.1f} MiB ({unpacked / 2**20:.1f} MiB installed), "
              f"{covers(py, abi)}, {plat}")
        if missing:
            bad = 1
            print(f"    FAIL {w.name} lacks {', '.join(missing)}", file=sys.stderr)
        if needs_sodium:
            bad = 1
            print(f"    FAIL {w.name}: the extension needs a shared libsodium", file=sys.stderr)
    return bad


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
