"""Print a new CURVE key pair, or write it as certificate files
(pyzmq's ``python -m zmq.curve_keygen``).

    python -m oxmq.curve_keygen              # public and secret key, Z85
    python -m oxmq.curve_keygen --json       # the same as JSON
    python -m oxmq.curve_keygen NAME [DIR]   # write DIR/NAME.key and NAME.key_secret
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

import oxmq as zmq


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python3 -m zmq.curve_keygen", description="Generate a CURVE key pair")
    parser.add_argument("name", nargs="?", help="write certificate files NAME.key and NAME.key_secret")
    parser.add_argument("directory", nargs="?", default=".", help="where to write them (default: .)")
    parser.add_argument("--secret", metavar="SECRET_KEY", help="print the public key of this Z85 secret key")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    if args.secret:
        secret = args.secret.encode("ascii")
        public = zmq.curve_public(secret)
    else:
        public, secret = zmq.curve_keypair()
    if args.name:
        from oxmq.auth.certs import create_certificates

        public_file, secret_file = create_certificates(args.directory, args.name)
        print(f"public key: {public_file}\nsecret key: {secret_file}")
        return
    if args.json:
        json.dump({"public": public.decode("ascii"), "secret": secret.decode("ascii")}, sys.stdout)
        print()
    else:
        print("== CURVE PUBLIC KEY ==")
        print(public.decode("ascii"))
        print("== CURVE SECRET KEY ==")
        print(secret.decode("ascii"))


if __name__ == "__main__":
    main()
