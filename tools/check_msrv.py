#!/usr/bin/env python3
"""Checks the workspace's declared minimum Rust version (`rust-version` in the
root Cargo.toml) against what the build needs:

1. every package in Cargo.lock (all platforms, dev-dependencies included)
   declares a `rust_version` no newer than the workspace's;
2. clippy's `msrv` (clippy.toml, used by the `incompatible_msrv` lint for
   the crates that do not inherit `rust-version`) equals it, so
   `cargo clippy -- -D warnings` rejects std APIs newer than it;
3. nothing allows `clippy::incompatible_msrv`.

Exit status 1 with one line per problem. Run from the workspace root.
"""

import json
import pathlib
import re
import subprocess
import sys


def version(v: str) -> tuple[int, ...]:
    t = tuple(int(x) for x in re.findall(r"\d+", v)[:3])
    return t + (0,) * (3 - len(t))


def main() -> int:
    root = pathlib.Path(".")
    cargo = (root / "Cargo.toml").read_text()
    m = re.search(r'^rust-version\s*=\s*"([^"]+)"', cargo, re.M)
    if not m:
        print("check-msrv: no rust-version in the workspace Cargo.toml")
        return 1
    msrv = m.group(1)
    problems = []
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    members = set(meta["workspace_members"])
    for p in meta["packages"]:
        rv = p.get("rust_version")
        if p["id"] in members:
            if rv and version(rv) != version(msrv):
                problems.append(f"{p['name']} declares rust-version {rv}, the workspace {msrv}")
            continue
        if rv and version(rv) > version(msrv):
            problems.append(
                f"dependency {p['name']} {p['version']} needs Rust {rv} > rust-version {msrv}"
            )
    clippy = root / "clippy.toml"
    cm = re.search(r'^msrv\s*=\s*"([^"]+)"', clippy.read_text(), re.M) if clippy.exists() else None
    if not cm or version(cm.group(1)) != version(msrv):
        problems.append(f'clippy.toml must say msrv = "{msrv}" (the workspace rust-version)')
    for f in [
        *root.glob("crates/**/*.rs"),
        *root.glob("crates/*/Cargo.toml"),
        root / "Cargo.toml",
        clippy,
    ]:
        if "target" in f.parts or not f.exists():
            continue
        text = f.read_text()
        if re.search(r"(allow|expect)\s*\(\s*[^)]*incompatible_msrv", text) or re.search(
            r"incompatible_msrv\s*=\s*\"?(allow|expect)", text
        ):
            problems.append(f"{f}: allows clippy::incompatible_msrv")
    for p in problems:
        print(f"check-msrv: {p}")
    if not problems:
        print(f"check-msrv: rust-version {msrv} covers every dependency and is clippy's msrv")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
