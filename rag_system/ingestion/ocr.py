"""OCR for PDF pages that have no usable text layer.

RapidOCR (ONNX models shipped inside the `rapidocr` wheel) is preferred
because it needs nothing outside Python; Tesseract is used when RapidOCR is
not importable and the `tesseract` binary is on PATH. Engines are created
lazily, once per process (model loading takes a second), and calls are
serialised per engine because the ONNX sessions already use every core.
"""

from __future__ import annotations

import logging
import shutil
import statistics
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)

#: Resolution pages are rendered at for OCR; ~200 dpi suits 8-12 pt print.
OCR_DPI = 200
#: Longest rendered side in pixels, so a poster-sized page cannot exhaust memory.
MAX_SIDE_PX = 5000


@dataclass(frozen=True)
class OcrLine:
    """One recognised text line with its box in image pixels."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float


class OcrEngine(Protocol):
    name: str

    def paragraphs(self, png: bytes, image: Any) -> list[str]:
        """Recognise text in one page image; return its paragraphs in reading order."""


class RapidOcrEngine:
    """RapidOCR with the models bundled in the installed package (never downloads)."""

    name = "rapidocr"

    def __init__(self) -> None:
        from rapidocr import RapidOCR  # lazy: pulls in onnxruntime and OpenCV

        # The per-line 0/180 degree classifier is off: on upright document scans it
        # flips a few ordinary lines and they come back as gibberish (seen on a
        # 150 dpi scan of the HR policy PDF); it also costs ~20% of the time.
        params: dict[str, Any] = {"Global.log_level": "warning", "Global.use_cls": False}
        params.update(_bundled_rapidocr_models())
        self._engine = RapidOCR(params=params)
        self._lock = threading.Lock()

    def paragraphs(self, png: bytes, image: Any) -> list[str]:
        with self._lock:
            result = self._engine(image)
        texts = getattr(result, "txts", None) or ()
        boxes = getattr(result, "boxes", None)
        if boxes is None or not texts:
            return []
        lines = []
        for text, box in zip(texts, boxes):
            xs = [float(point[0]) for point in box]
            ys = [float(point[1]) for point in box]
            if text and text.strip():
                lines.append(OcrLine(text.strip(), min(xs), min(ys), max(xs), max(ys)))
        return group_lines(lines)


class TesseractEngine:
    """The `tesseract` command line program, fed a PNG on stdin."""

    name = "tesseract"

    def __init__(self, binary: str, language: str = "eng", timeout_s: float = 300.0) -> None:
        self._command = [binary, "stdin", "stdout", "-l", language, "--dpi", str(OCR_DPI)]
        self._timeout_s = timeout_s

    def paragraphs(self, png: bytes, image: Any) -> list[str]:
        done = subprocess.run(self._command, input=png, capture_output=True, timeout=self._timeout_s,
                              check=False)
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RuntimeError(f"tesseract failed: {message[-1] if message else done.returncode}")
        text = done.stdout.decode("utf-8", "replace").replace("\f", "")
        return [" ".join(part.split()) for part in text.split("\n\n") if part.strip()]


def _bundled_rapidocr_models() -> dict[str, str]:
    """Explicit model paths inside the rapidocr package.

    With `model_path` set RapidOCR skips its download logic entirely, so a
    missing model fails fast with FileNotFoundError instead of a network call.
    """
    import rapidocr

    models = Path(rapidocr.__file__).resolve().parent / "models"
    found: dict[str, str] = {}
    for task, section in (("det", "Det"), ("cls", "Cls"), ("rec", "Rec")):
        candidates = sorted(models.glob(f"*_{task}_*.onnx"))
        if not candidates:
            raise FileNotFoundError(f"no {task} model in {models}; reinstall the rapidocr package")
        found[f"{section}.model_path"] = str(candidates[0])
    return found


def group_lines(lines: list[OcrLine]) -> list[str]:
    """Turn recognised line boxes into paragraphs.

    Boxes whose vertical centres are close form one row (left to right); a
    vertical gap larger than ~0.8 of a typical line height starts a new
    paragraph, which is how a human sees paragraph breaks on a scan.
    """
    if not lines:
        return []
    ordered = sorted(lines, key=lambda line: ((line.y0 + line.y1) / 2, line.x0))
    rows: list[list[OcrLine]] = []
    for line in ordered:
        if rows:
            row = rows[-1]
            centre = sum((item.y0 + item.y1) / 2 for item in row) / len(row)
            height = max(item.y1 - item.y0 for item in row)
            if abs((line.y0 + line.y1) / 2 - centre) < height / 2:
                row.append(line)
                continue
        rows.append([line])
    heights = [max(item.y1 - item.y0 for item in row) for row in rows]
    typical = statistics.median(heights) if heights else 0.0
    paragraphs: list[list[str]] = []
    previous_bottom: float | None = None
    for row in rows:
        top = min(item.y0 for item in row)
        text = " ".join(item.text for item in sorted(row, key=lambda item: item.x0))
        if previous_bottom is None or top - previous_bottom > 0.8 * typical:
            paragraphs.append([text])
        else:
            paragraphs[-1].append(text)
        previous_bottom = max(item.y1 for item in row)
    return [" ".join(parts) for parts in paragraphs]


_ENGINES: dict[str, tuple[OcrEngine | None, str]] = {}
_ENGINES_LOCK = threading.Lock()


def get_ocr_engine(choice: str) -> tuple[OcrEngine | None, str]:
    """Return (engine, "") for `choice`, or (None, reason) when none can run.

    `choice` is the OCR_ENGINE setting: auto, rapidocr, tesseract or none.
    The outcome, including failure, is cached per process so a document with
    a hundred scanned pages does not retry a broken install a hundred times.
    """
    if choice == "none":
        return None, "OCR is disabled (OCR_ENGINE=none)"
    with _ENGINES_LOCK:
        if choice not in _ENGINES:
            _ENGINES[choice] = _create_engine(choice)
        return _ENGINES[choice]


def _create_engine(choice: str) -> tuple[OcrEngine | None, str]:
    reasons = []
    if choice in ("auto", "rapidocr"):
        try:
            engine = RapidOcrEngine()
            logger.info("OCR engine: RapidOCR (bundled ONNX models)")
            return engine, ""
        except Exception as exc:  # ImportError, missing models, onnxruntime errors
            logger.warning("RapidOCR is unavailable: %s", exc)
            reasons.append(f"RapidOCR unavailable ({exc})")
    if choice in ("auto", "tesseract"):
        binary = shutil.which("tesseract")
        if binary:
            logger.info("OCR engine: Tesseract at %s", binary)
            return TesseractEngine(binary), ""
        reasons.append("tesseract is not installed")
    return None, "no OCR engine available: " + "; ".join(reasons)


def render_for_ocr(page: Any, engine: OcrEngine) -> tuple[bytes, Any]:
    """Render one PyMuPDF page in grey at `OCR_DPI` (capped): (PNG for Tesseract, array for RapidOCR).

    Only this part touches MuPDF; recognition itself runs without the MuPDF lock.
    """
    import numpy as np
    import pymupdf

    longest_inch = max(page.rect.width, page.rect.height) / 72.0 or 1.0
    dpi = max(72, min(OCR_DPI, int(MAX_SIDE_PX / longest_inch)))
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width).copy()
    png = pixmap.tobytes("png") if isinstance(engine, TesseractEngine) else b""
    return png, image


def page_is_blank(page: Any) -> bool:
    """True when a page renders to a single colour (nothing to OCR); cheap at 24 dpi."""
    return bool(page.get_pixmap(dpi=24, alpha=False).is_unicolor)
