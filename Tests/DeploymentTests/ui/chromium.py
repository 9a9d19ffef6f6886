"""Headless Chromium from Debian (chromium, chromium-driver) driven by Selenium, for the
page's tests and its render-time benchmark. Nothing is downloaded: the browser and driver
paths are given, so Selenium Manager never runs, and the browser keeps its own background
traffic off (no component updates, no sync, no proxies)."""

import json
import os

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = os.environ.get("HW_CHROMIUM", "/usr/bin/chromium")
DRIVER = os.environ.get("HW_CHROMEDRIVER", "/usr/bin/chromedriver")


def browser(width=1280, height=900):
    """A fresh headless browser with its own profile (its own cookies): one 'browser context'."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--disable-default-apps",
                     "--disable-extensions", "--no-proxy-server", "--disable-features=Translate,MediaRouter,OptimizationHints",
                     "--hide-scrollbars", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)


def viewport(driver, width, height, mobile=False):
    """Emulates a screen of width x height CSS pixels (a phone with mobile=True)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def requested_urls(driver):
    """Every URL the page asked the network for since the last call (Chromium's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def console_errors(driver):
    """Console messages of level SEVERE (a CSP violation among them) since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
