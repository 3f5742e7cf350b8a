#!/usr/bin/env python3
"""The module import graph of a Rust crate's `src/`, and the layering rules
of `crates/oxmq/src` checked on it (issue 22: the core has no import loop).

A module is a source file (`a/b.rs` is `a::b`, `a/mod.rs` is `a`). An edge
M -> N means M's code names something in N: a `use` tree or a path written
inline (`crate::x::y`, `super::x`, `self::x`, or a child module's name).
A name reached through a re-export (`pub use`, `pub(crate) use`) counts as
an edge to the module that defines it, and the re-exporting module gets
the edge to it too. Comments, strings and test-only code (`#[cfg(test)]`
items and modules) are left out: tests may reach across the layers to
build fixtures, and nothing imports a test module, so tests can close no
loop.

It prints every strongly connected component of more than one module (a
loop), and fails (exit 1) when
  - a loop has a module other than `ctx` and those under `socket` (the
    context <-> socket pair is libzmq's shape: a context makes sockets, a
    socket asks its context for the I/O thread and the inproc registry),
    unless the loop stays inside one folder: a `mod.rs` and the files under
    it, which Rust's privacy already makes one unit (a child sees its
    parent's private items); such loops are printed as "inside FOLDER", or
  - a module under `transport/` or `io/` names `socket`, something under it,
    or `ctx` (the I/O layer and the transports sit below the socket layer).

Usage: tools/import_graph.py [SRC_DIR] [--edges] [--strict]
       SRC_DIR defaults to crates/oxmq/src; --edges prints every edge;
       --strict fails on loops inside one folder too.
"""

import os
import re
import sys

KEYWORDS_FIRST = {"crate", "super", "self"}
# Layers below the socket layer, and what they must not name.
LOWER = ("transport", "io")
UPPER = ("socket", "ctx")
# A loop may hold these only: the context and the socket layer.
LOOP_ALLOWED = ("ctx", "socket")


def module_of(path, src):
    rel = os.path.relpath(path, src)[: -len(".rs")]
    parts = rel.split(os.sep)
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts)


def strip_comments_and_strings(text):
    """Blanks out comments, string and char literals (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def item_end(text, i):
    """End of the item starting at `i`: after its `;` or its braced body."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        elif c == "{" and depth == 0:
            d = 1
            i += 1
            while i < n and d:
                d += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            return i
        i += 1
    return n


TEST_ATTR = re.compile(r"#\[cfg\((test|all\(test\b[^\]]*|any\(test\b[^\]]*)\)\]")


def strip_test_items(text):
    """Removes items under #[cfg(test)]; returns (text, test module names)."""
    test_mods = set()
    while True:
        m = TEST_ATTR.search(text)
        if not m:
            return text, test_mods
        start = m.end()
        # Skip further attributes on the same item.
        while True:
            a = re.match(r"\s*#\[", text[start:])
            if not a:
                break
            start = item_end_attr(text, start + a.end() - 2)
        mm = re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+)", text[start:])
        if mm:
            test_mods.add(mm.group(3))
        end = item_end(text, start)
        text = text[: m.start()] + "\n" * text.count("\n", m.start(), end) + text[end:]


def item_end_attr(text, i):
    """End of the attribute `#[...]` starting at `i`."""
    depth = 0
    while i < len(text):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def split_top(s, sep=","):
    parts, depth, cur = [], 0, []
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_use_tree(tree, prefix=()):
    """`a::{b, c::d as e, f::*}` -> [(path, alias)]"""
    tree = re.sub(r"\s*::\s*", "::", tree.strip())
    tree = re.sub(r"\s*([{},])\s*", r"\1", tree)
    if tree.startswith("::"):
        tree = tree[2:]
    brace = tree.find("{")
    if brace >= 0 and tree.endswith("}"):
        head_parts = tuple(p for p in tree[:brace].split("::") if p)
        out = []
        for sub in split_top(tree[brace + 1: -1]):
            out.extend(expand_use_tree(sub, prefix + head_parts))
        return out
    alias = None
    m = re.match(r"^(.*?)\s+as\s+(\w+)$", tree)
    if m:
        tree, alias = m.group(1), m.group(2)
    parts = prefix + tuple(p for p in tree.split("::") if p)
    if parts and parts[-1] == "self":
        parts = parts[:-1]
    if not parts:
        return []
    return [(parts, alias or parts[-1])]


USE_RE = re.compile(r"(?m)^[ \t]*(pub(\s*\([^)]*\))?\s+)?use\s+([^;]+);")
PATH_RE = re.compile(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+|\w+(?:::\w+)+)")


class Crate:
    def __init__(self, src):
        self.src = src
        self.modules = {}  # module -> cleaned text
        self.test_modules = set()
        for dirpath, _, files in os.walk(src):
            for f in sorted(files):
                if f.endswith(".rs"):
                    p = os.path.join(dirpath, f)
                    with open(p, encoding="utf-8") as fh:
                        raw = fh.read()
                    text, test_mods = strip_test_items(strip_comments_and_strings(raw))
                    mod = module_of(p, src)
                    self.modules[mod] = (text, p)
                    for t in test_mods:
                        self.test_modules.add(mod + (t,))
        # A module under a test module is test code too.
        for mod in list(self.modules):
            if any(mod[: k] in self.test_modules for k in range(1, len(mod) + 1)):
                self.test_modules.add(mod)
        self.externs = {}  # module -> names its `use` items bring from other crates
        self.uses = {m: self.parse_uses(m) for m in self.modules}

    def children(self, mod):
        return {m[-1] for m in self.modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def absolute(self, mod, parts):
        """A path as written in `mod` -> a path from the crate root, or None (extern)."""
        if not parts:
            return None
        cur = list(mod)
        i = 0
        if parts[0] == "crate":
            cur, i = [], 1
        elif parts[0] in ("self", "super"):
            while i < len(parts) and parts[i] in ("self", "super"):
                if parts[i] == "super":
                    if not cur:
                        return None
                    cur.pop()
                i += 1
        elif parts[0] in self.children(mod):
            pass
        else:
            return None
        return tuple(cur) + tuple(parts[i:])

    def parse_uses(self, mod):
        """[(absolute path, alias, is_pub)] of the module's `use` items."""
        text = self.modules[mod][0]
        out = []
        self.externs[mod] = set()
        for m in USE_RE.finditer(text):
            for parts, alias in expand_use_tree(m.group(3)):
                if parts[-1] == "*":
                    parts = parts[:-1]
                    alias = "*"
                ab = self.absolute(mod, parts)
                if ab is not None:
                    out.append((ab, alias, bool(m.group(1))))
                else:
                    self.externs[mod].add(alias)
        return out

    def resolve(self, path, seen=None):
        """Absolute item path -> the module that defines it (re-exports followed)."""
        seen = seen or set()
        for k in range(len(path), -1, -1):
            if path[:k] in self.modules:
                mod, rest = path[:k], path[k:]
                break
        else:
            return None
        if rest and (mod, rest[0]) not in seen:
            seen.add((mod, rest[0]))
            for ab, alias, is_pub in self.uses[mod]:
                if is_pub and alias == rest[0]:
                    return self.resolve(ab + rest[1:], seen)
        return mod

    def edges(self):
        graph = {m: set() for m in self.modules}
        for mod, (text, _) in self.modules.items():
            targets = set()
            for ab, alias, _ in self.uses[mod]:
                targets.add(self.resolve(ab))
            body = USE_RE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
            # `mod x;` declarations are ownership, not imports.
            body = re.sub(r"(?m)^[ \t]*(pub(\s*\([^)]*\))?\s+)?mod\s+\w+\s*;", "", body)
            imported = {alias: ab for ab, alias, _ in self.uses[mod] if alias != "*"}
            for m in PATH_RE.finditer(body):
                parts = tuple(m.group(1).split("::"))
                if parts[0] in self.externs[mod] and parts[0] not in imported:
                    continue  # e.g. `use std::thread;` shadows a child `thread`
                if parts[0] in imported and parts[0] not in KEYWORDS_FIRST:
                    ab = imported[parts[0]] + parts[1:]
                else:
                    ab = self.absolute(mod, parts)
                if ab is not None:
                    targets.add(self.resolve(ab))
            targets.discard(None)
            targets.discard(mod)
            graph[mod] = targets
        return graph


def sccs(graph):
    """Tarjan's algorithm, iterative."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def name(mod):
    return "::".join(mod) if mod else "crate"


def under(mod, top):
    return bool(mod) and mod[0] == top


# A crate made to break each rule once, and to hide references the check
# must not count; --self-test runs the check on it and expects exactly these.
SELF_TEST_CRATE = {
    "lib.rs": "mod ctx; mod io; mod patterns; mod socket; mod transport;\npub use socket::Socket;\n",
    "ctx.rs": "use crate::socket::Socket;\npub struct Ctx;\n",
    "socket/mod.rs": "mod shared;\nuse crate::{ctx::Ctx, patterns::P};\npub struct Socket;\n",
    "socket/shared.rs": "use super::Socket;\n",
    "io/mod.rs": (
        "mod thread;\nuse crate::transport::tcp as t;\npub struct Io;\n"
        "fn f() { let _ = crate::ctx::Ctx; }\n"
        "// crate::socket::Socket in a comment\nconst S: &str = \"crate::socket::Socket\";\n"
        "#[cfg(test)]\nmod tests { use crate::socket::Socket; }\n"
    ),
    "io/thread.rs": "use super::Io;\npub(crate) fn g() { let _ = super::Io; }\n",
    "transport/mod.rs": "pub(crate) mod tcp;\n",
    "patterns/mod.rs": "mod a;\nuse a::A;\npub struct P;\n",
    "patterns/a.rs": "use super::P;\npub struct A;\n",
    "transport/tcp.rs": "pub(crate) fn h() { let _: crate::Socket; }\nuse super::super::io::{self};\n",
}
SELF_TEST_EXPECT = [
    "loop of 2 modules: io, transport::tcp",
    "upward import: io -> ctx (transport/io must not name socket/ctx)",
    "upward import: transport::tcp -> socket (transport/io must not name socket/ctx)",
]


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for rel, text in SELF_TEST_CRATE.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        crate = Crate(d)
        failures = check(crate, quiet=True)
    if failures != SELF_TEST_EXPECT:
        print("import graph self-test FAILED: expected", SELF_TEST_EXPECT, "got", failures)
        return 1
    print(f"import graph self-test: the check finds the {len(failures)} planted faults and nothing else")
    return 0


def check(crate, strict=False, quiet=False, show_edges=False):
    """Prints the graph's loops; returns the list of failures."""
    out = (lambda *a: None) if quiet else print
    graph = crate.edges()
    test_mods = crate.test_modules
    prod = {m: {t for t in ts if t not in test_mods} for m, ts in graph.items() if m not in test_mods}
    if show_edges:
        for m in sorted(graph):
            tag = " (test)" if m in test_mods else ""
            out(f"{name(m)}{tag} -> {', '.join(name(t) for t in sorted(graph[m]))}")
    failures = []
    loops = [c for c in sccs(prod) if len(c) > 1]
    n_edges = sum(len(v) for v in prod.values())
    out(f"import graph of {crate.src}: {len(prod)} modules, {n_edges} edges "
        f"({len(test_mods)} test-only modules left out)")
    for comp in loops:
        members = set(comp)
        top = min(comp, key=len)
        inside = all(m[: len(top)] == top for m in comp)
        allowed = (inside and not strict) or all(m[0] in LOOP_ALLOWED for m in comp)
        what = f"inside {name(top)}/" if inside else "context <-> socket" if allowed else "across folders"
        out(f"loop ({len(comp)} modules) {what}{'' if allowed else ', NOT ALLOWED'}:")
        for m in comp:
            out(f"  {name(m)} -> {', '.join(sorted(name(t) for t in prod[m] if t in members))}")
        if not allowed:
            failures.append(f"loop of {len(comp)} modules: {', '.join(name(m) for m in comp)}")
    if not loops:
        out("no loop")
    for m in sorted(prod):
        if not any(under(m, low) for low in LOWER):
            continue
        for t in sorted(prod[m]):
            if any(under(t, up) for up in UPPER):
                failures.append(f"upward import: {name(m)} -> {name(t)} "
                                f"({'/'.join(LOWER)} must not name {'/'.join(UPPER)})")
    return failures


def main(argv):
    if "--self-test" in argv:
        return self_test()
    args = [a for a in argv if not a.startswith("--")]
    crate = Crate(args[0] if args else "crates/oxmq/src")
    failures = check(crate, strict="--strict" in argv, show_edges="--edges" in argv)
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("import graph: ok (no loop beyond ctx <-> socket, nothing in transport/ or io/ names socket or ctx)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
