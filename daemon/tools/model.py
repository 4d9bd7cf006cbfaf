"""`tsuzuri-model`: list registered models, download one from Hugging Face, or check a local file."""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

from daemon.engine.registry import ModelEntry, RegistryError, load_registry, models_dir, resolve_model


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(entry: ModelEntry, target_dir: Path) -> Path:
    """Fetch a registered model into target_dir (huggingface_hub shows a progress bar)."""
    if entry.hf_repo is None:
        raise RegistryError(f"model {entry.name!r} is {entry.source}, not downloadable")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise RegistryError("downloading needs huggingface_hub: pip install 'tsuzuri[download]'") from None
    try:
        cached = Path(hf_hub_download(repo_id=entry.hf_repo, filename=entry.file))
    except Exception as exc:  # network errors come in many types; the user needs one line
        raise RegistryError(
            f"cannot download {entry.file} from {entry.hf_repo} (offline?): {type(exc).__name__}"
        ) from None
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / entry.file
    partial = target.with_suffix(target.suffix + ".part")
    shutil.copyfile(cached, partial)
    partial.replace(target)
    return target


def verify(path: Path, entry: ModelEntry) -> str:
    digest = sha256_of(path)
    if entry.sha256 and digest != entry.sha256:
        raise RegistryError(f"{path} has sha256 {digest}, registry expects {entry.sha256}")
    return digest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-model", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="registered models and whether they are present")
    get = sub.add_parser("download", help="download a registered model")
    get.add_argument("name")
    get.add_argument("--dir", type=Path, default=None, help="target folder (default: the models folder)")
    check = sub.add_parser("check", help="verify a registered model or a local GGUF path")
    check.add_argument("name")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for name, entry in load_registry().items():
                path, _ = resolve_model(name)
                print(f"{name}\t{entry.format}\t{entry.source}\t{'present' if path.exists() else 'absent'}")
        elif args.command == "download":
            wanted = load_registry().get(args.name)
            if wanted is None:
                raise RegistryError(f"unknown model {args.name!r}")
            path = download(wanted, args.dir or models_dir())
            print(f"{path}\tsha256 {verify(path, wanted)}")
        else:
            path, entry = resolve_model(args.name)
            if not path.exists():
                raise RegistryError(f"{path} does not exist")
            print(f"{path}\tsha256 {verify(path, entry)}")
    except RegistryError as exc:
        print(f"tsuzuri-model: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
