"""OCR placeholder (filled in below)."""

MISSING_HINT = "apt-get install tesseract-ocr tesseract-ocr-kor tesseract-ocr-script-hang"


def available() -> bool:
    return False
