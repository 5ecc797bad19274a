"""Tesseract in this process: the libtesseract the `tesseract` program is built on, through its C
API (ctypes, nothing to install). One model load serves every read of the run, whatever the page
segmentation mode or whitelist (a `tesseract` process costs ~0.1 s of CPU to start, reading a
small picture a few ms), and ctypes lets go of the GIL while Tesseract reads, so a background
thread reads beside the page layout. Reading an image here gives the words the program gives for
it (tests/test_glyph_pictures.py compares them). `engine()` is None where the library cannot be
loaded this way; callers then run the program.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

import numpy as np

from curation.extract.ocr import OcrError, OcrWord, tsv_words

_LIBRARIES = ("libtesseract.so.5", "libtesseract.so.4")
_loading = threading.Lock()
_engines: dict[str, TesseractEngine | None] = {}


class TesseractEngine:
    """One initialised Tesseract (TessBaseAPI) for `languages`; reads one image list at a time."""

    def __init__(self, lib: ctypes.CDLL, languages: str):
        self._lib, self._lock = lib, threading.Lock()
        self._api = lib.TessBaseAPICreate()
        if lib.TessBaseAPIInit3(self._api, None, languages.encode()) != 0:
            lib.TessBaseAPIDelete(self._api)
            raise OcrError(f"libtesseract could not load {languages}")
        # as the program is run (ocr.run_tesseract_pages); its messages would go to our stderr
        for name, value in (("preserve_interword_spaces", "1"), ("debug_file", os.devnull)):
            lib.TessBaseAPISetVariable(self._api, name.encode(), value.encode())

    def read(self, images: list[np.ndarray], psm: int, whitelist: str) -> list[list[OcrWord]]:
        """The words of each grayscale image, as `tesseract --psm PSM -c tessedit_char_whitelist=…` reads it."""
        lib, api = self._lib, self._api
        pages: list[list[OcrWord]] = [[] for _ in images]
        with self._lock:
            lib.TessBaseAPISetPageSegMode(api, psm)
            lib.TessBaseAPISetVariable(api, b"tessedit_char_whitelist", whitelist.encode())
            for index, image in enumerate(images):
                pixels = np.ascontiguousarray(image, dtype=np.uint8)
                lib.TessBaseAPISetImage(api, pixels.ctypes.data, pixels.shape[1], pixels.shape[0], 1, pixels.strides[0])
                if lib.TessBaseAPIRecognize(api, None) != 0:
                    raise OcrError("libtesseract could not read a picture")
                text = lib.TessBaseAPIGetTsvText(api, index)
                try:
                    tsv_words(ctypes.string_at(text).decode("utf-8", "replace"), pages)
                finally:
                    lib.TessDeleteText(text)
        return pages

    def close(self) -> None:
        with self._lock:
            self._lib.TessBaseAPIEnd(self._api)
            self._lib.TessBaseAPIDelete(self._api)


def engine(languages: str = "eng") -> TesseractEngine | None:
    """This process's Tesseract for `languages`, loaded on the first call (~0.1 s); None when
    libtesseract (4 or later) is not found, cannot load them, or would read with many threads."""
    with _loading:
        if languages not in _engines:
            lib = _load()
            try:
                _engines[languages] = TesseractEngine(lib, languages) if lib is not None else None
            except OcrError:
                _engines[languages] = None
        return _engines[languages]


def _forget_in_child() -> None:
    """A forked process starts without its parent's engines (their locks may be held by a thread
    the child does not have)."""
    global _loading
    _loading = threading.Lock()
    _engines.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def close_engines() -> None:
    """End every engine (Tesseract reports its models as leaked when the process exits without)."""
    with _loading:
        for loaded in _engines.values():
            if loaded is not None:
                loaded.close()
        _engines.clear()


def _load() -> ctypes.CDLL | None:
    # libgomp reads OMP_THREAD_LIMIT once, when it loads with libtesseract: OpenMP threads cost
    # five times the CPU on pictures this small (the program is run with the same limit)
    previous = os.environ.get("OMP_THREAD_LIMIT")
    os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        lib = _open()
    finally:
        if previous is None:
            del os.environ["OMP_THREAD_LIMIT"]
        else:
            os.environ["OMP_THREAD_LIMIT"] = previous
    if lib is None or not _single_threaded():
        return None
    try:
        lib.TessVersion.restype = ctypes.c_char_p
        if int(lib.TessVersion().decode().split(".")[0]) < 4:
            return None
        _declare(lib)
    except (AttributeError, ValueError):  # not the C API this module knows
        return None
    import atexit

    atexit.register(close_engines)
    return lib


def _open() -> ctypes.CDLL | None:
    for name in _LIBRARIES:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    found = ctypes.util.find_library("tesseract")
    try:
        return ctypes.CDLL(found) if found else None
    except OSError:
        return None


def _single_threaded() -> bool:
    """OpenMP, if Tesseract uses it, runs one thread (False: libgomp was loaded before, unlimited)."""
    try:
        gomp = ctypes.CDLL("libgomp.so.1", mode=getattr(os, "RTLD_NOLOAD", 0) or ctypes.DEFAULT_MODE)
    except OSError:
        return True  # not loaded: this Tesseract does not use it
    return bool(gomp.omp_get_thread_limit() == 1)


def _declare(lib: ctypes.CDLL) -> None:
    handle, text = ctypes.c_void_p, ctypes.c_char_p
    signatures = {
        "TessBaseAPICreate": (handle, []),
        "TessBaseAPIInit3": (ctypes.c_int, [handle, text, text]),
        "TessBaseAPISetVariable": (ctypes.c_int, [handle, text, text]),
        "TessBaseAPISetPageSegMode": (None, [handle, ctypes.c_int]),
        "TessBaseAPISetImage": (None, [handle, handle, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]),
        "TessBaseAPIRecognize": (ctypes.c_int, [handle, handle]),
        "TessBaseAPIGetTsvText": (handle, [handle, ctypes.c_int]),  # freed with TessDeleteText
        "TessDeleteText": (None, [handle]),
        "TessBaseAPIEnd": (None, [handle]),
        "TessBaseAPIDelete": (None, [handle]),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = result, arguments
