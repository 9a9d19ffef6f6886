"""Times the page in headless Chromium for the benchmark (health-warehouse-bench ui): signs in
with HW_UI_TOKEN, loads HW_UI_PATH HW_UI_RUNS times after two warm-up loads, and prints JSON
lists (milliseconds from navigation start, and bytes) of each load."""

import json
import os
import sys

from selenium.webdriver.common.by import By

from chromium import browser

BASE = os.environ["HW_UI_URL"]
PATH = os.environ.get("HW_UI_PATH", "/ui/days/365")
RUNS = int(os.environ.get("HW_UI_RUNS", "9"))

TIMING = """
const n = performance.getEntriesByType('navigation')[0];
const fcp = performance.getEntriesByName('first-contentful-paint')[0];
return {firstContentfulPaint: fcp ? fcp.startTime : null, responseEnd: n.responseEnd, responseStart: n.responseStart,
        domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd, htmlBytes: n.encodedBodySize,
        transferBytes: n.transferSize,
        resourceBytes: performance.getEntriesByType('resource').reduce((s, r) => s + r.encodedBodySize, 0)};
"""


def main():
    driver = browser()
    try:
        driver.get(BASE + "/ui")
        driver.find_element(By.ID, "token").send_keys(os.environ["HW_UI_TOKEN"])
        driver.find_element(By.CSS_SELECTOR, "form.sign-in button").click()
        loads = []
        for run in range(RUNS + 2):
            driver.get(BASE + PATH)
            if run >= 2:
                loads.append(driver.execute_script(TIMING))
        json.dump({key: [load[key] for load in loads] for key in loads[0]}, sys.stdout)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
