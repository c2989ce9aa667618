#!/usr/bin/env python3
"""Check a tree made by tests/tools/make-fixture-index against its MANIFEST.json,
reading only the tree itself (pages, wheels, .metadata): used by
fixture_index.bats. Prints one line per problem; exit 1 if any.

    fixture_index_check.py DIR [--fatbin-dir D]
"""

import base64
import email.parser
import hashlib
import json
import os
import re
import sys
import urllib.parse
import zipfile
import zlib
from html.parser import HTMLParser

PROJECTS = ("torch", "torchvision", "torchaudio")
problems = []


def problem(msg):
    problems.append(msg)


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.h1, self._in_a, self._in_h1 = [], None, False, False
        self.comments = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append({"attrs": dict(attrs), "text": ""})
            self._in_a = True
        elif tag == "h1":
            self._in_h1, self.h1 = True, ""

    def handle_endtag(self, tag):
        if tag == "a":
            self._in_a = False
        elif tag == "h1":
            self._in_h1 = False

    def handle_data(self, data):
        if self._in_a:
            self.links[-1]["text"] += data
        elif self._in_h1:
            self.h1 += data

    def handle_comment(self, data):
        self.comments.append(data)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def local_path(root, manifest, page_rel, href):
    """Map an href (root-relative or absolute to one of the two hosts) to a file."""
    url = href.split("#", 1)[0]
    for host in manifest["hosts"].values():
        if url.startswith(host["url"] + "/"):
            return os.path.join(root, host["root"], urllib.parse.unquote(url[len(host["url"]) + 1:]))
    if url.startswith("/"):
        return os.path.join(root, "www", urllib.parse.unquote(url[1:]))
    return os.path.join(root, os.path.dirname(page_rel), urllib.parse.unquote(url))


def read_wheel(path):
    try:
        return read_wheel_unchecked(path)
    except (zipfile.BadZipFile, zlib.error, StopIteration, KeyError, OSError) as e:
        problem(f"{path}: not a readable wheel: {e!r}")
        return None


def read_wheel_unchecked(path):
    """METADATA, RECORD and {member: (record-style hash, size, bytes or None)},
    hashing members as streams so that large wheels stay out of memory."""
    members = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            h = hashlib.sha256()
            keep = bytearray() if info.file_size <= (1 << 20) else None
            with zf.open(info) as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
                    if keep is not None:
                        keep += chunk
            digest = "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
            members[info.filename] = (digest, info.file_size,
                                      bytes(keep) if keep is not None else None)
    distinfo = next(n.split("/")[0] for n in members if n.endswith(".dist-info/METADATA"))
    metadata = members[f"{distinfo}/METADATA"][2]
    record = members[f"{distinfo}/RECORD"][2].decode()
    return distinfo, metadata, record, members


def check_record(path, distinfo, record, members):
    seen = set()
    for line in record.splitlines():
        name, digest, size = line.rsplit(",", 2)
        seen.add(name)
        if name == f"{distinfo}/RECORD":
            if digest or size:
                problem(f"{path}: RECORD line for itself has a hash")
            continue
        have = members.get(name)
        if have is None or digest != have[0] or int(size) != have[1]:
            problem(f"{path}: RECORD mismatch for {name}")
    if seen != set(members):
        problem(f"{path}: RECORD lists {sorted(seen ^ set(members))} wrongly")


def check_pages(root, manifest):
    """Structure, link counts, hashes, .metadata. Returns parsed links per page."""
    wrong = {q["path"] for q in manifest["irregularities"] if q["kind"] == "wrong-hash"}
    found_wrong = set()
    parsed = {}
    metadata_seen = {}
    for rel, info in sorted(manifest["pages"].items()):
        text = open(os.path.join(root, rel), encoding="utf-8").read()
        if not text.startswith("<!DOCTYPE html>\n<html>\n  <body>\n"):
            problem(f"{rel}: bad head")
        if not re.search(r"</html>\n<!--TIMESTAMP \d+-->\n\Z", text):
            problem(f"{rel}: bad trailer")
        p = PageParser()
        p.feed(text)
        parsed[rel] = p.links
        if len(p.links) != info["links"]:
            problem(f"{rel}: {len(p.links)} links, manifest says {info['links']}")
        if info["project"] and p.h1 != f"Links for {info['project']}":
            problem(f"{rel}: h1 {p.h1!r}")
        if not info["project"]:
            for link in p.links:
                if link["attrs"]["href"] != link["text"] + "/":
                    problem(f"{rel}: root link {link['attrs']['href']}")
            continue
        for link in p.links:
            href = link["attrs"]["href"]
            base = urllib.parse.unquote(href.split("#")[0].rsplit("/", 1)[1])
            if base != link["text"] or "+" in href:
                problem(f"{rel}: href {href} vs text {link['text']}")
            path = local_path(root, manifest, rel, href)
            relpath = os.path.relpath(path, root)
            if not os.path.isfile(path):
                problem(f"{rel}: {href} has no file")
                continue
            frag = href.partition("#")[2]
            if frag:
                published = frag.removeprefix("sha256=")
                actual = sha256_file(path)
                if published != actual:
                    if relpath in wrong:
                        found_wrong.add(relpath)
                    else:
                        problem(f"{rel}: {link['text']}: published {published} actual {actual}")
                elif relpath in wrong:
                    problem(f"{rel}: deliberately wrong hash is right")
            check_metadata_attrs(rel, link, path, metadata_seen)
    if found_wrong != wrong:
        problem(f"wrong hashes found {sorted(found_wrong)}, expected {sorted(wrong)}")
    return parsed


def check_metadata_attrs(rel, link, path, seen):
    a = link["attrs"]
    dist, core = a.get("data-dist-info-metadata"), a.get("data-core-metadata")
    if dist != core:
        problem(f"{rel}: {link['text']}: dist-info-metadata != core-metadata")
    if path in seen:
        return
    wheel = read_wheel(path)
    if wheel is None:
        seen[path] = None
        return
    distinfo, metadata, record, members = wheel
    check_record(path, distinfo, record, members)
    seen[path] = metadata
    if core is None:
        if os.path.exists(path + ".metadata"):
            problem(f"{path}.metadata exists but the page does not announce it")
        return
    side = open(path + ".metadata", "rb").read()
    if side != metadata:
        problem(f"{path}.metadata differs from METADATA in the wheel")
    if core != "sha256=" + hashlib.sha256(side).hexdigest():
        problem(f"{rel}: {link['text']}: data-core-metadata does not match .metadata")


def check_gpu_payload(root, manifest, fatbin_dir):
    libs = {v: open(os.path.join(fatbin_dir, f"libtorch_cuda_{v}.so"), "rb").read()
            for v in ("cu126", "cu128")}
    counted = 0
    for f in manifest["files"]:
        if f["project"] not in ("torch", "torchvision") or f["channel"] == "large":
            continue
        wheel = read_wheel(os.path.join(root, f["path"]))
        if wheel is None:
            continue
        members = wheel[3]
        libs_in = {n: m[2] for n, m in members.items() if n.endswith(".so")}
        want_name = "torch/lib/libtorch_cuda.so" if f["project"] == "torch" else "torchvision/_C.so"
        if f["variant"] in libs:
            counted += 1
            if libs_in != {want_name: libs[f["variant"]]}:
                problem(f"{f['path']}: GPU payload is not {f['variant']}'s library")
        elif libs_in:
            problem(f"{f['path']}: cpu wheel carries {sorted(libs_in)}")
    if counted == 0:
        problem("no CUDA wheel checked for its GPU payload")


def vkey(version):
    """Numeric order key; enough here (no target mixes dev and final releases)."""
    return tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0]))


def parse_meta(data):
    msg = email.parser.BytesParser().parsebytes(data)
    return msg["Name"], msg["Version"], msg.get_all("Requires-Dist") or []


def rederive_sets(root, manifest, parsed):
    """Recompute each target's torch/vision/audio sets from pages and metadata
    alone (pins read from .metadata, or from the wheel when there is none)."""
    for t in manifest["targets"]:
        folder = {"nightly": "whl/nightly", "stable": "whl", "test": "whl/test"}[t["channel"]]
        have = {}
        for project in PROJECTS:
            rel = f"www/{folder}/{t['variant']}/{project}/index.html"
            for link in parsed.get(rel, []):
                m = re.fullmatch(r"(\w+)-([^-]+)-([^-]+)-([^-]+)-([^-]+)\.whl", link["text"])
                _, version, interp, abi, plat = m.groups()
                if plat != t["platform"] or (abi != t["python"] and
                                             not (abi == "none" and interp == t["python"])):
                    continue
                path = local_path(root, manifest, rel, link["attrs"]["href"])
                if "data-core-metadata" in link["attrs"]:
                    meta = open(path + ".metadata", "rb").read()
                else:
                    wheel = read_wheel(path)
                    if wheel is None:
                        continue
                    meta = wheel[1]
                name, mversion, reqs = parse_meta(meta)
                if name != project or mversion != version:
                    problem(f"{path}: METADATA says {name} {mversion}")
                pin = next((r.split("==", 1)[1] for r in reqs if r.startswith("torch==")), None)
                have.setdefault(project, []).append((version, pin))
        sets = []
        torches = sorted(have.get("torch", []), key=lambda v: vkey(v[0]), reverse=True)
        for version, _ in torches:
            base = version.split("+")[0]
            row = {"torch": version}
            for p in ("torchvision", "torchaudio"):
                match = sorted((v for v, pin in have.get(p, []) if pin == base), key=vkey, reverse=True)
                row[p] = match[0] if match else None
            sets.append(row)
        want = [{p: s[p] for p in PROJECTS} for s in t["sets"]]
        if sets != want:
            problem(f"target {t['channel']} {t['variant']} {t['python']} {t['platform']}: "
                    f"pages give {sets}, manifest {want}")


def check_files_listed(root, manifest):
    listed = {f["path"] for f in manifest["files"]}
    on_disk = set()
    for top in ("www", "www2"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(".whl"):
                    on_disk.add(os.path.relpath(os.path.join(d, name), root))
    if listed != on_disk:
        problem(f"manifest vs disk: {sorted(listed ^ on_disk)[:5]}")


def main():
    root = sys.argv[1]
    fatbin_dir = sys.argv[sys.argv.index("--fatbin-dir") + 1] if "--fatbin-dir" in sys.argv \
        else os.path.join(os.path.dirname(__file__), "..", "fixtures", "fatbin")
    manifest = json.load(open(os.path.join(root, "MANIFEST.json")))
    parsed = check_pages(root, manifest)
    check_files_listed(root, manifest)
    check_gpu_payload(root, manifest, fatbin_dir)
    rederive_sets(root, manifest, parsed)
    for p in problems[:50]:
        print(p)
    n_links = sum(len(v) for v in parsed.values())
    print(f"checked {len(parsed)} pages, {n_links} links, {len(manifest['files'])} files: "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
