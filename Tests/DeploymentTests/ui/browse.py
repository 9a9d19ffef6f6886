"""Drives the page (GET /ui) of a running `serve` in headless Chromium, as a person would with a
keyboard, and prints one JSON object of what it saw; Tests/DeploymentTests/PageBrowserTests.swift
compares it with SQL and asserts. Screenshots go to HW_UI_SCREENSHOTS.

Environment: HW_UI_URL (http://127.0.0.1:PORT), HW_UI_TOKEN_ME, HW_UI_TOKEN_ALEX,
HW_UI_TOKEN_EXPIRED, HW_UI_SCREENSHOTS (a folder)."""

import json
import os
import sys
import time
import urllib.request

from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.action_chains import ActionChains

from chromium import browser, console_errors, requested_urls, viewport

BASE = os.environ["HW_UI_URL"]
SHOTS = os.environ["HW_UI_SCREENSHOTS"]

# Everything the Swift test compares, read from the DOM in one call.
EXTRACT = """
const text = e => e ? e.textContent.trim() : null;
const tables = {};
for (const section of document.querySelectorAll('section[id]')) {
  const table = section.querySelector(':scope > .scroll > table');
  if (!table) continue;
  tables[section.id] = {
    head: [...table.querySelectorAll('thead th')].map(text),
    rows: [...table.querySelectorAll('tbody tr')].map(tr => ({
      day: (text(tr.querySelector('th')) || '').slice(0, 10),
      uuid: ((tr.querySelector('a[href^="/ui/workouts/"]') || {getAttribute: () => null}).getAttribute('href') || '').split('/')[3] || null,
      partial: tr.classList.contains('partial'), header: text(tr.querySelector('th')),
      cells: [...tr.querySelectorAll('td')].map(td => ({text: text(td), gap: td.classList.contains('gap'), bold: text(td.querySelector('b'))}))
    }))
  };
}
const legend = {};
document.querySelectorAll('dl.sources > div').forEach(d => { legend[text(d.querySelector('dt'))] = d.querySelector('dd').textContent; });
// A mark per day: each distinct "M x" of the mark paths (stacked parts share their x), plus today's outline.
const charts = [...document.querySelectorAll('#charts figure')].map(f => {
  const xs = new Set();
  f.querySelectorAll('path.m').forEach(p => (p.getAttribute('d').match(/M[0-9.]+/g) || []).forEach(m => xs.add(m)));
  const partial = [...new Set([...f.querySelectorAll('.partial title')].map(t => t.textContent))];
  return {caption: text(f.querySelector('figcaption')), marks: xs.size + partial.length, partial};
});
return {
  title: document.title, h1: text(document.querySelector('h1')), person: text(document.querySelector('.person strong')),
  signInForm: !!document.querySelector('form.sign-in'), error: text(document.querySelector('#sign-in-error')),
  lastBatch: text(document.querySelector('#last-batch')), newestSample: text(document.querySelector('#newest-sample')),
  stale: text(document.querySelector('#freshness .stale')), workoutTotals: text(document.querySelector('#workout-totals')),
  leftOut: text(document.querySelector('#left-out')), tables, legend, charts,
  scripts: document.querySelectorAll("script").length, bodyText: document.body.textContent,
  htmlBytes: new TextEncoder().encode(document.documentElement.outerHTML).length,
  firstContentfulPaint: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null
};
"""


def extract(driver):
    return driver.execute_script(EXTRACT)


def focus_sequence(driver, count):
    """Presses Tab `count` times from the top of the page; what each press focused."""
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    seen = []
    for _ in range(count):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        seen.append(driver.execute_script(
            "const e = document.activeElement; return e.tagName + ':' + (e.id || e.getAttribute('href') || e.textContent.trim())"))
    return seen


def sign_in_with_keyboard(driver, token):
    """Opens /ui, tabs to the token field, types the token and presses Enter."""
    driver.get(BASE + "/ui")
    for _ in range(6):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.execute_script("return document.activeElement.id") == "token":
            break
    ActionChains(driver).send_keys(token).send_keys(Keys.ENTER).perform()
    time.sleep(0.2)
    return extract(driver)


def cookie(driver):
    found = driver.get_cookie("hw_session")
    return None if found is None else {"httpOnly": found.get("httpOnly"), "sameSite": found.get("sameSite"),
                                       "secure": found.get("secure"), "path": found.get("path"), "value": found.get("value")}


def shot(driver, name, width, height, mobile=False, scroll_to=None):
    viewport(driver, width, height, mobile)
    driver.execute_script("window.scrollTo(0, 0)" if scroll_to is None else
                          f"document.getElementById('{scroll_to}').scrollIntoView()")
    time.sleep(0.3)
    path = os.path.join(SHOTS, name)
    driver.save_screenshot(path)
    return path


def replay(session_value, path="/ui"):
    """GET with a session cookie the browser no longer holds, outside the browser (no proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(BASE + path, headers={"Cookie": "hw_session=" + session_value})
    with opener.open(request, timeout=10) as response:
        return response.read().decode("utf-8")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    out = {"screenshots": []}
    me, alex = browser(), browser()
    try:
        me.get(BASE + "/ui")
        out["signedOut"] = extract(me)
        out["screenshots"].append(shot(me, "sign-in-phone.png", 390, 700, mobile=True))
        viewport(me, 1280, 900)
        out["wrong"] = sign_in_with_keyboard(me, "hw_this-is-not-a-token")
        out["wrongCookie"] = cookie(me)
        out["expired"] = sign_in_with_keyboard(me, os.environ["HW_UI_TOKEN_EXPIRED"])
        out["expiredCookie"] = cookie(me)
        out["me"] = sign_in_with_keyboard(me, os.environ["HW_UI_TOKEN_ME"])
        out["meCookie"] = cookie(me)
        out["meURL"] = me.current_url
        out["focus"] = focus_sequence(me, 6)
        out["screenshots"].append(shot(me, "days-desktop.png", 1280, 900))
        out["screenshots"].append(shot(me, "days-phone.png", 390, 844, mobile=True))
        out["screenshots"].append(shot(me, "tables-desktop.png", 1280, 900, scroll_to="sources"))
        viewport(me, 1280, 900)
        # The chooser, by keyboard from a fresh load: Tab to "365 days", Enter.
        me.get(BASE + "/ui")
        for _ in range(8):
            ActionChains(me).send_keys(Keys.TAB).perform()
            if me.execute_script("return document.activeElement.getAttribute('href')") == "/ui/days/365":
                break
        ActionChains(me).send_keys(Keys.ENTER).perform()
        time.sleep(0.3)
        out["me365URL"] = me.current_url
        out["me365"] = extract(me)
        route = me.find_elements(By.XPATH, "//section[@id='workout-list']//tr[.//span[text()='route']]//a")
        if route:
            route[0].click()
            time.sleep(0.2)
            out["workoutURL"] = me.current_url
            out["workout"] = {"h1": extract(me)["h1"],
                              "routePoints": len(me.execute_script(
                                  "const p = document.querySelector('polyline.route-line'); return p ? p.getAttribute('points').split(' ') : []")),
                              "heartRate": me.execute_script("return !!document.querySelector('#heart-rate polyline')"),
                              "facts": me.execute_script("return document.querySelector('dl.facts').innerText")}
            out["screenshots"].append(shot(me, "workout-desktop.png", 1280, 1250))
        viewport(alex, 1280, 900)
        out["alex"] = sign_in_with_keyboard(alex, os.environ["HW_UI_TOKEN_ALEX"])
        try:
            alex.switch_to.alert
            out["alexAlert"] = True
        except NoAlertPresentException:
            out["alexAlert"] = False
        me.get(BASE + "/ui")
        out["meAgain"] = extract(me)
        held = cookie(me)["value"]
        me.find_element(By.CSS_SELECTOR, "form.sign-out button").click()
        time.sleep(0.2)
        out["signedOutAgain"] = extract(me)
        out["afterSignOutCookie"] = cookie(me)
        out["replayedAfterSignOut"] = "action=\"/ui/sign-in\"" in replay(held) and "Signed in as" not in replay(held)
        out["requests"] = requested_urls(me) + requested_urls(alex)
        out["consoleErrors"] = console_errors(me) + console_errors(alex)
    finally:
        me.quit()
        alex.quit()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
