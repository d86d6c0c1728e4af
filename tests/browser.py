"""A headless Chromium for browser tests (Debian's `chromium` + `chromium-driver`, driven by selenium).

`make extras` installs both (scripts/install_system_packages.sh); without them the tests that need a
browser skip, naming what to install.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SCREENSHOTS = os.environ.get("YAML_TFX_SCREENSHOTS", os.path.join(os.path.dirname(__file__), "..", "test-artifacts"))


def headless_chromium(width: int = 1400, height: int = 1000):
    """A selenium WebDriver on a headless Chromium with no network proxying; the caller quits it.

    Skips the calling test when Chromium, chromedriver or selenium is missing.
    """
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip(
            "needs Debian's chromium and chromium-driver: `make extras` (apt-get install chromium chromium-driver)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium: `make extras`")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def save_screenshot(driver, name: str) -> str:
    """Saves a PNG of the page under `test-artifacts/` (or $YAML_TFX_SCREENSHOTS); returns its path."""
    os.makedirs(SCREENSHOTS, exist_ok=True)
    path = os.path.abspath(os.path.join(SCREENSHOTS, f"{name}.png"))
    driver.save_screenshot(path)
    return path
