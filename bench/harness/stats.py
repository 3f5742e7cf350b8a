"""Speed ratios oxmq/peer, with their ranges over the repetitions."""

def side_speed(entry, metric, lower_better):
    d = entry.get("metrics", {}).get(metric)
    if not d:
        return None
    v = d["median"]
    if v <= 0:
        return None
    return 1.0 / v if lower_better else v


def side_speed_range(entry, metric, lower_better):
    """(slowest, fastest) speed across the repetitions."""
    d = entry.get("metrics", {}).get(metric)
    if not d or d["min"] <= 0:
        return None
    return (1.0 / d["max"], 1.0 / d["min"]) if lower_better else (d["min"], d["max"])


# oxmq's Python package sends an exact `bytes` of at least this size by
# reference (python/src/frame.rs, LEND_BYTES_MIN) where pyzmq copies it.
PY_LEND_MIN = 4096


def lend_note(cell, key):
    """Why an oxmq side of this cell does other work than its copying peers, or None."""
    k = cell.get("key", {})
    if key.startswith("oxmq_py") and k.get("mode", "copy") == "copy" and int(k.get("size") or 0) >= PY_LEND_MIN:
        return "lend: oxmq lends the exact bytes by reference, the peer copies it"
    return None


def ratios(cell, metric, lower_better, impls, extra_peers=None):
    """Speed ratios oxmq/peer (>1 = oxmq faster) for one cell: each oxmq side
    against its declared peers, plus extra_peers[side] for this cell only.
    Each carries the ratio's range over the repetitions (slowest oxmq ÷ fastest
    peer .. fastest oxmq ÷ slowest peer), whether the two sides' ranges overlap,
    and "unlike" where the sides do different work (no headline from it)."""
    out = []
    for key, e in cell["sides"].items():
        if not e.get("oxmq"):
            continue
        mine = side_speed(e, metric, lower_better)
        unlike = lend_note(cell, key)
        if unlike:
            e["work"] = "lend"
        for peer in tuple(impls[key].peers) + tuple((extra_peers or {}).get(key, ())):
            pe = cell["sides"].get(peer)
            if pe is None:
                continue
            theirs = side_speed(pe, metric, lower_better)
            if mine is None or theirs is None:
                continue
            r = {"oxmq": key, "peer": peer, "ratio": mine / theirs}
            mr, tr = side_speed_range(e, metric, lower_better), side_speed_range(pe, metric, lower_better)
            if mr and tr:
                r.update(lo=mr[0] / tr[1], hi=mr[1] / tr[0])
                r["overlap"] = r["lo"] <= 1.0 <= r["hi"]
            if unlike and not pe.get("oxmq"):
                r["unlike"] = unlike
            out.append(r)
    cell.setdefault("ratios", {})[metric] = out
    return out
