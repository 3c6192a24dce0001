"""End to end: the demo Space in headless Chromium, generating with a tiny GPT-2.

Starts ``space/app.py`` on 127.0.0.1 in a subprocess and

* opens it at desktop (1280x900) and phone (390x844) sizes: the first view shows the
  scores of the stored GPT-2 answers without a click, and no table runs past the
  viewport (each fits, or sits in a box that scrolls sideways); screenshots go to
  ``artifacts/space_desktop.png``, ``artifacts/space_phone.png`` and full-page
  versions ``*_full.png``;
* picks a ProtoQA dev question by searching the dropdown, generates answers, checks that
  the scores, the matched clusters and the chart appear, then shows the stored GPT-2
  answers (``artifacts/space_browser.png``, ``artifacts/space_browser_stored.png``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.apps import hub_folder_env, started_app
from tests.support.metric_names import PAPER_KEYS

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
QUESTION_ID = "r1q7"  # "Name a vegetable that is about as big as your head."
SEARCH = "vegetable"
STARTUP_TIMEOUT = 240
STEP_TIMEOUT = 120

pytestmark = pytest.mark.browser


def _require_tools() -> None:
    pytest.importorskip("selenium", reason="selenium is not installed")
    pytest.importorskip("transformers", reason="transformers is not installed")
    pytest.importorskip("gradio", minversion="6.31", reason="the demo Space needs gradio 6.31 (gr.api)")
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(tool) or shutil.which(Path(tool).name)):
            pytest.skip(f"{tool} is missing (Debian: apt-get install chromium chromium-driver)")
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not available")


def _cluster_words(question_id: str) -> list[str]:
    with open(SHARED_DATA / "protoqa" / "dev.crowdsourced.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["metadata"]["id"] == question_id:
                answers = [a for c in row["answers"]["clusters"].values() for a in c["answers"]]
                return sorted({w for a in answers for w in a.split()})
    raise LookupError(question_id)


@pytest.fixture(scope="module")
def running_app(tmp_path_factory, request):
    """(url, log path) of the app serving a tiny GPT-2 and the shared data; always stopped.

    Parametrized indirectly with ``"no model"``, it serves a model folder that does not exist.
    One app per kind serves the module's tests (each test loads its own page): a start costs seconds.
    """
    _require_tools()
    tmp_path = tmp_path_factory.mktemp("space-app")
    from tests.support.tiny_lm import build_word_list_gpt2

    if getattr(request, "param", None) == "no model":
        model_dir = tmp_path / "no-such-model"
    else:
        model_dir = build_word_list_gpt2(tmp_path / "tiny-gpt2", _cluster_words(QUESTION_ID))
    env = {
        **os.environ,
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PROTOQA_SPACE_MODEL": str(model_dir),
        "PROTOQA_SPACE_DATA_DIR": str(SHARED_DATA),
        "PROTOQA_SPACE_TMP": str(tmp_path / "space-tmp"),
    }
    for variable in ("GRADIO_TEMP_DIR", "MPLCONFIGDIR"):
        env.pop(variable, None)
    log = tmp_path / "app.log"
    command = [sys.executable, str(REPO / "space" / "app.py")]
    with started_app(command, cwd=tmp_path, env=env, log=log, timeout=STARTUP_TIMEOUT, ready_path="/") as (base, _):
        yield f"{base}/", log


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """One headless Chromium for the module's tests; ``browser`` hands it to each test reset."""
    _require_tools()
    tmp_path = tmp_path_factory.mktemp("chromium")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1400,2300",
        f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-', dir=tmp_path)}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(STEP_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium):
    """The module's Chromium on a blank page at its window size, as a newly started one is."""
    chromium.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    chromium.get("about:blank")
    return chromium


ARTIFACTS = REPO / "artifacts"

# Every table's box, and whether it fits the viewport itself or inside a sideways-scrolling box that does.
OVERFLOW_JS = """
const width = document.documentElement.clientWidth;
const report = [];
for (const table of document.querySelectorAll('table')) {
  const box = table.getBoundingClientRect();
  if (box.width === 0) continue;  // hidden
  let fits = box.left >= -1 && box.right <= width + 1;
  let scroller = null;
  for (let node = table.parentElement; node && !fits; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowX;
    if (overflow === 'auto' || overflow === 'scroll') {
      const outer = node.getBoundingClientRect();
      fits = outer.left >= -1 && outer.right <= width + 1;
      scroller = node.className;
      break;
    }
  }
  report.push({cls: table.className, left: box.left, right: box.right, fits: fits, scroller: scroller});
}
return {viewport: window.innerWidth, width: width, pageWidth: document.documentElement.scrollWidth, tables: report};
"""


LAYOUT_JS = """
const question = document.querySelector('#question input');
const header = [...document.querySelectorAll('#clusters th')].find(t => t.textContent.startsWith('Answers in'));
const img = document.querySelector('#distribution img');
const signatures = document.querySelector('#signatures');
return {questionPadding: getComputedStyle(question).paddingRight,
        answersHeaderRight: header.getBoundingClientRect().right,
        chart: [img.naturalWidth, img.getBoundingClientRect().width],
        chartBox: document.querySelector('#distribution').getBoundingClientRect().width,
        signatures: [signatures.scrollWidth, signatures.clientWidth]};
"""


def _viewport(browser, width: int, height: int, mobile: bool) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


def _full_page_screenshot(browser, path: Path, width: int, mobile: bool) -> None:
    height = browser.execute_script("return document.documentElement.scrollHeight")
    _viewport(browser, width, min(int(height), 8000), mobile)
    time.sleep(0.5)
    assert browser.save_screenshot(str(path))


@pytest.mark.parametrize("size", [(1280, 800, False, "desktop"), (390, 844, True, "phone")], ids=["desktop", "phone"])
def test_first_view_shows_scores_and_tables_fit(running_app, browser, size):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    width, height, mobile, name = size
    url, log = running_app
    _viewport(browser, width, height, mobile)
    browser.get(url)
    wait = WebDriverWait(browser, STEP_TIMEOUT)
    # Scores of the first view, with no click: the stored GPT-2 answers to r1q1.
    table = wait.until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#scores table.protoqa-scores"),
        message=f"no scores on load:\n{log.read_text()[-2000:]}",
    )
    cells = [c.text for c in table.find_elements(By.CSS_SELECTOR, "tbody tr:first-child td")]
    assert cells == ["max_answers@1", "1.000", "1.000"]
    assert "KL(P" in browser.find_element(By.CSS_SELECTOR, "#scores .probeval-kl").text
    assert "r1q1" in browser.find_element(By.ID, "summary").text
    assert browser.find_element(By.CSS_SELECTOR, "#clusters table.human-clusters")
    assert browser.find_element(By.CSS_SELECTOR, "#distribution img")
    # The model loads, then Generate is enabled.
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#generate").is_enabled())
    time.sleep(1.0)  # let the layout settle after the last update

    report = browser.execute_script(OVERFLOW_JS)
    assert report["viewport"] == width  # (report["width"] leaves out the scroll bar)
    assert len(report["tables"]) >= 3, report
    assert all(t["fits"] for t in report["tables"]), report
    assert report["pageWidth"] <= report["width"] + 1, report
    if mobile:  # the widest table needs its scroll box on a phone
        assert any(t["scroller"] for t in report["tables"]), report
    layout = browser.execute_script(LAYOUT_JS)
    # The picked question's text stops before the dropdown arrow.
    assert float(layout["questionPadding"].rstrip("px")) >= 24, layout
    # The clusters' answers are on screen without scrolling sideways.
    assert layout["answersHeaderRight"] <= report["width"] + 1, layout
    # The chart is shown at its own size (readable labels), scrolling sideways on a phone.
    natural, shown = layout["chart"]
    assert shown >= 0.95 * min(natural, layout["chartBox"]) if not mobile else shown >= 0.95 * natural, layout
    # Signatures wrap inside the page.
    assert layout["signatures"][0] <= layout["signatures"][1] + 1, layout

    ARTIFACTS.mkdir(exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(ARTIFACTS / f"space_{name}.png"))
    _full_page_screenshot(browser, ARTIFACTS / f"space_{name}_full.png", width, mobile)


def test_generate_and_score_a_dev_question_in_chromium(running_app, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    url, log = running_app
    wait = WebDriverWait(browser, STEP_TIMEOUT)
    browser.get(url)
    status = wait.until(lambda d: d.find_element(By.ID, "model-status"))
    wait.until(lambda d: "ready" in status.text, message=f"model never became ready:\n{log.read_text()[-2000:]}")
    wait.until(lambda d: d.find_element(By.ID, "generate").is_enabled())

    # Search the question dropdown and pick the question.
    box = browser.find_element(By.CSS_SELECTOR, "#question input")
    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(SEARCH)

    def first_match(d):
        # The list filters as the text arrives: wait until it shows the question.
        options = d.find_elements(By.CSS_SELECTOR, "#question li[data-testid=dropdown-option]")
        matching = [o for o in options if QUESTION_ID + " " in o.text]
        return matching[0] if len(options) == 1 and matching else False

    option = wait.until(first_match, message="the dropdown never narrowed down to the question")
    option.click()
    wait.until(lambda d: box.get_attribute("value").startswith(QUESTION_ID))

    samples = browser.find_element(By.CSS_SELECTOR, "#num-samples input[type=number]")
    samples.send_keys(Keys.CONTROL, "a")
    samples.send_keys("60", Keys.TAB)
    browser.find_element(By.ID, "generate").click()
    # The first view already has a score table: wait for the generated answers' summary.
    wait.until(
        lambda d: "(generated)" in d.find_element(By.ID, "status").text,
        message=f"no generated answers:\n{log.read_text()[-2000:]}",
    )

    table = wait.until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#scores table.protoqa-scores"),
        message=f"no score table:\n{log.read_text()[-2000:]}",
    )
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.find_element(By.TAG_NAME, "td").text for r in rows] == list(PAPER_KEYS)
    assert "KL(P" in browser.find_element(By.CSS_SELECTOR, "#scores .probeval-kl").text
    assert browser.find_element(By.ID, "status").text.startswith("Done: ")
    assert "60 samples" in browser.find_element(By.ID, "summary").text

    # Some of the tiny model's one-word answers claim human clusters ("C1 pumpkin", ...).
    answers = browser.find_element(By.CSS_SELECTOR, "#answers table.model-answers")
    claimed = [c.text for c in answers.find_elements(By.CSS_SELECTOR, "td span") if c.text[:1] == "C"]
    assert claimed, answers.text
    clusters = browser.find_element(By.CSS_SELECTOR, "#clusters table.human-clusters")
    assert "C1 pumpkin" in clusters.text and "claimed" in clusters.text

    chart = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#distribution img"))
    wait.until(lambda d: chart.get_attribute("naturalWidth") not in (None, "0"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)

    artifacts = ARTIFACTS
    artifacts.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(artifacts / "space_browser.png"))

    # The stored answers of the paper's fine-tuned GPT-2 for the same question.
    browser.find_element(By.ID, "stored").click()
    wait.until(lambda d: "(stored)" in d.find_element(By.ID, "status").text)
    assert "fine-tuned GPT-2" in browser.find_element(By.ID, "summary").text
    assert browser.find_element(By.CSS_SELECTOR, "#scores table.protoqa-scores")
    assert browser.save_screenshot(str(artifacts / "space_browser_stored.png"))

    # An example under the question picker shows another question's stored answers in one click.
    example = browser.find_element(By.XPATH, "//button[contains(., 'ProtoQA r1q3: something a monk')]")
    example.click()
    wait.until(
        lambda d: "question r1q3" in d.find_element(By.ID, "summary").text,
        message=f"the example did not show r1q3:\n{log.read_text()[-2000:]}",
    )
    assert "(stored)" in browser.find_element(By.ID, "status").text
    assert browser.find_element(By.CSS_SELECTOR, "#question input").get_attribute("value").startswith("r1q3")


@pytest.mark.parametrize("running_app", ["no model"], indirect=True)
def test_without_a_model_generate_is_disabled_and_explained(running_app, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, log = running_app
    browser.get(url)
    wait = WebDriverWait(browser, STEP_TIMEOUT)
    status = wait.until(lambda d: d.find_element(By.ID, "model-status"))
    wait.until(
        lambda d: "No model could be loaded" in status.text, message=f"no explanation:\n{log.read_text()[-2000:]}"
    )
    generate = browser.find_element(By.ID, "generate")
    wait.until(lambda d: "no model" in generate.text)
    assert not generate.is_enabled()
    assert "Show stored GPT-2 answers" in status.text
    assert "primary" in browser.find_element(By.ID, "stored").get_attribute("class")
    assert browser.find_element(By.CSS_SELECTOR, "#scores table.protoqa-scores")  # the first view is there
    ARTIFACTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "space_no_model.png"))


@pytest.fixture(scope="module")
def hub_page(tmp_path_factory):
    """The URL of a Hub-folder page (``python app.py`` in a built folder); one for the module's tests."""
    from protoqa_integrations.hub.folders import write_hub_folder

    _require_tools()
    tmp_path = tmp_path_factory.mktemp("hub-page")
    folder = write_hub_folder(tmp_path / "protoqa", "protoqa", requirement="protoqa-eval[evaluate]")
    env = hub_folder_env(tmp_path)
    log = tmp_path / "app.log"
    command = [sys.executable, "app.py"]
    with started_app(command, cwd=folder, env=env, log=log, timeout=STARTUP_TIMEOUT, ready_path="/") as (base, _):
        yield f"{base}/"


@pytest.mark.parametrize("size", [(1280, 800, False, "desktop"), (390, 844, True, "phone")], ids=["desktop", "phone"])
def test_hub_folder_page_fits_a_phone(hub_page, browser, size):
    """The Hub-folder page: JSON fields wrap long lines, and no field's buttons cover its label."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    width, height, mobile, name = size
    _viewport(browser, width, height, mobile)
    browser.get(hub_page)
    WebDriverWait(browser, STEP_TIMEOUT).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".cm-content"))
    time.sleep(1.0)
    fields = browser.execute_script("""
return [...document.querySelectorAll('.cm-editor')].map(editor => {
  const block = editor.closest('.block');
  const label = block.querySelector('label, [data-testid="block-label"]');
  const buttons = [...block.querySelectorAll('button')].map(b => b.getBoundingClientRect())
                   .filter(r => r.width > 0);
  const l = label ? label.getBoundingClientRect() : null;
  const covered = l ? buttons.some(b => b.left < l.right && b.right > l.left && b.top < l.bottom && b.bottom > l.top)
                    : false;
  const scroller = editor.querySelector('.cm-scroller');
  return {label: label ? label.textContent.trim() : null, covered: covered,
          overflow: scroller.scrollWidth - scroller.clientWidth};
});""")
    assert len(fields) >= 3, fields
    assert all(not f["covered"] for f in fields), fields
    assert all(f["overflow"] <= 1 for f in fields), fields  # long JSON lines wrap
    ARTIFACTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / f"hub_page_{name}.png"))


@pytest.mark.parametrize("running_app", ["no model"], indirect=True)  # the tab needs no model
def test_leaderboard_tab_shows_the_shipped_boards_and_ranks_an_upload(running_app, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, log = running_app
    browser.get(url)
    wait = WebDriverWait(browser, STEP_TIMEOUT)
    tab = wait.until(
        lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "[role=tab]") if b.text == "Leaderboard"), None)
    )
    tab.click()
    # The tab's content is drawn once it is shown: look the table up again on every try.
    wait.until(
        lambda d: "GPT-2 fine-tuned (ProtoQA paper)" in d.find_element(By.ID, "leaderboard-table").text,
        message=log.read_text()[-2000:],
    )
    assert browser.find_element(By.CSS_SELECTOR, "#leaderboard-plot img").get_attribute("src")
    label = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#leaderboard-board label") if "CFC test" in e.text)
    label.click()
    wait.until(lambda d: "gpt2-large-ft.zeroshot" in d.find_element(By.ID, "leaderboard-table").text)
    # A name written as a Markdown link is shown as its text, not rendered (Gradio strips "<>" from upload names).
    upload = tmp_path / "[mine](x).jsonl"
    shutil.copy(SHARED_DATA / "cfc" / "test.samples.gpt2-xl.oneshot.jsonl", upload)
    browser.find_element(By.CSS_SELECTOR, "#leaderboard-upload input[type=file]").send_keys(str(upload))
    # Gradio shows a file's stem and extension in separate elements: its name is their joined text.
    wait.until(lambda d: "[mine](x).jsonl" in d.find_element(By.ID, "leaderboard-upload").text.replace("\n", ""))
    # The shipped CFC test systems differ in samples per question: ranking one more among them is accepted.
    tick = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#leaderboard-accept label") if e.text == "samples")
    tick.click()
    browser.find_element(By.ID, "leaderboard-rank").click()
    wait.until(
        lambda d: "[mine](x) (uploaded)" in d.find_element(By.ID, "leaderboard-table").text,
        message=f"{browser.find_element(By.ID, 'leaderboard-status').text}\n{log.read_text()[-2000:]}",
    )
    assert "1 uploaded file(s) ranked" in browser.find_element(By.ID, "leaderboard-status").text
    # The upload is drawn in the plot too.
    wait.until(
        lambda d: "board-" in (d.find_element(By.CSS_SELECTOR, "#leaderboard-plot img").get_attribute("src") or "")
    )
    ARTIFACTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "space_leaderboard.png"))


# Every header cell of the leaderboard: its text, its right edge, and the words that the browser broke across lines.
HEADERS_JS = """
const cells = [...document.querySelectorAll('#leaderboard-table thead th')];
const report = [];
for (const th of cells) {
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  const broken = [];
  let node;
  while ((node = walker.nextNode())) {
    const text = node.textContent;
    const re = /\\S+/g;
    let m;
    while ((m = re.exec(text))) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  const box = th.getBoundingClientRect();
  report.push({text: th.innerText.replace(/\\s+/g, ' ').trim(), right: box.right, width: box.width, broken: broken});
}
return {width: document.documentElement.clientWidth, headers: report};
"""

# The rows the table shows (a grid of divs; its <table> holds only the headers and an unseen sizing row).
CELLS_JS = """
return [...document.querySelectorAll('#leaderboard-table div[role=row]')].map(
  row => [...row.querySelectorAll('[role=gridcell]')].map(cell => cell.textContent.trim()));
"""

PHONE_JS = """
const list = document.querySelector('#leaderboard-phone');
const items = [...document.querySelectorAll('#leaderboard-phone li')];
return {shown: !!list && list.offsetHeight > 0,
        items: items.map(li => ({text: li.innerText, right: li.getBoundingClientRect().right})),
        width: document.documentElement.clientWidth};
"""


def _open_leaderboard(browser, url, log):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    wait = WebDriverWait(browser, STEP_TIMEOUT)
    tab = wait.until(
        lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "[role=tab]") if b.text == "Leaderboard"), None)
    )
    tab.click()
    wait.until(
        lambda d: "GPT-2 fine-tuned (ProtoQA paper)" in d.find_element(By.ID, "leaderboard-table").text,
        message=log.read_text()[-2000:],
    )
    time.sleep(1.0)  # let the layout settle
    return wait


@pytest.mark.parametrize("running_app", ["no model"], indirect=True)
@pytest.mark.parametrize("size", [(1280, 1800, False, "desktop"), (390, 2400, True, "phone")], ids=["desktop", "phone"])
def test_leaderboard_reads_at_desktop_and_phone_sizes(running_app, browser, size, tmp_path):
    from selenium.webdriver.common.by import By

    width, height, mobile, name = size
    url, log = running_app
    _viewport(browser, width, height, mobile)
    wait = _open_leaderboard(browser, url, log)
    report = browser.execute_script(HEADERS_JS)
    texts = [h["text"] for h in report["headers"]]
    # the names protoqa-eval leaderboard prints and its plot draws
    assert "ProbEval KL ↓" in " ".join(texts) and "max_answers@10" in texts and "max_incorrect@5" in texts, report
    # No header is broken inside a word.
    assert not [h for h in report["headers"] if h["broken"]], report
    # One number format: every figure to three decimals, as the command line prints them
    cells = browser.execute_script(CELLS_JS)
    figures = [cell for row in cells for cell in row[2:]]
    assert figures and all(re.fullmatch(r"\d+\.\d{3}", cell) for cell in figures), cells
    phone = browser.execute_script(PHONE_JS)
    if mobile:
        # Each system with its main figure, inside the screen.
        assert phone["shown"] and len(phone["items"]) == 2, phone
        assert all(any(ch.isdigit() for ch in item["text"]) for item in phone["items"]), phone
        assert all(item["right"] <= phone["width"] + 1 for item in phone["items"]), phone
    else:
        # The paper's seven metrics and the KL are on screen without scrolling sideways.
        assert not phone["shown"], phone
        assert all(h["right"] <= report["width"] + 1 for h in report["headers"]), report
    ARTIFACTS.mkdir(exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(ARTIFACTS / f"space_leaderboard_{name}.png"))
    # A bad upload keeps the shipped board, its plot and its signature, and shows the one-line error.
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    browser.find_element(By.CSS_SELECTOR, "#leaderboard-upload input[type=file]").send_keys(str(deep))
    wait.until(lambda d: "deep.json" in d.find_element(By.ID, "leaderboard-upload").text.replace("\n", ""))
    browser.find_element(By.ID, "leaderboard-rank").click()
    wait.until(lambda d: "JSON nested too deeply" in d.find_element(By.ID, "leaderboard-status").text)
    assert "deep.json: JSON nested too deeply" in browser.find_element(By.ID, "leaderboard-status").text
    assert "Signature:" in browser.find_element(By.ID, "leaderboard-note").text
    assert "GPT-2 fine-tuned (ProtoQA paper)" in browser.find_element(By.ID, "leaderboard-table").text
    assert browser.find_element(By.CSS_SELECTOR, "#leaderboard-plot img").get_attribute("src")
    _full_page_screenshot(browser, ARTIFACTS / f"space_leaderboard_{name}_error.png", width, mobile)


# The control that accepts a mismatch: each choice's label, its right edge, and the page's width.
ACCEPT_JS = """
const labels = [...document.querySelectorAll('#leaderboard-accept label')];
return {labels: labels.map(l => ({text: l.innerText.trim(), right: l.getBoundingClientRect().right,
                                  shown: l.offsetHeight > 0})),
        width: document.documentElement.clientWidth};
"""


@pytest.mark.parametrize("running_app", ["no model"], indirect=True)
@pytest.mark.parametrize("size", [(1280, 1800, False, "desktop"), (390, 2400, True, "phone")], ids=["desktop", "phone"])
def test_a_mismatch_is_refused_then_ranked_once_ticked_at_desktop_and_phone_sizes(running_app, browser, size, tmp_path):
    from selenium.webdriver.common.by import By

    from tests.support.uploads import cfc_test_answers

    width, height, mobile, name = size
    url, log = running_app
    _viewport(browser, width, height, mobile)
    wait = _open_leaderboard(browser, url, log)
    label = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#leaderboard-board label") if "CFC test" in e.text)
    label.click()
    wait.until(lambda d: "gpt2-large-ft.zeroshot" in d.find_element(By.ID, "leaderboard-table").text)
    # Every field can be ticked, and every choice is inside the screen.
    accept = browser.execute_script(ACCEPT_JS)
    assert [c["text"] for c in accept["labels"]][:4] == ["dataset", "split", "questions", "samples"], accept
    assert all(c["shown"] and c["right"] <= accept["width"] + 1 for c in accept["labels"]), accept
    files = []
    for system, document in cfc_test_answers(SHARED_DATA, {"few": 10, "many": 40}).items():
        (tmp_path / f"{system}.json").write_text(json.dumps(document))
        files.append(str(tmp_path / f"{system}.json"))
    browser.find_element(By.CSS_SELECTOR, "#leaderboard-upload input[type=file]").send_keys("\n".join(files))
    wait.until(lambda d: "many.json" in d.find_element(By.ID, "leaderboard-upload").text.replace("\n", ""))
    browser.find_element(By.ID, "leaderboard-rank").click()
    wait.until(lambda d: "differ in samples" in d.find_element(By.ID, "leaderboard-status").text)
    status = browser.find_element(By.ID, "leaderboard-status").text
    assert "few and many differ in samples (few: 10, many: 40)" in status, status
    assert "tick samples under “Rank despite differing”" in status and "--accept-mismatch" not in status, status
    ARTIFACTS.mkdir(exist_ok=True)
    _full_page_screenshot(browser, ARTIFACTS / f"space_leaderboard_mismatch_{name}_refused.png", width, mobile)
    _viewport(browser, width, height, mobile)
    tick = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#leaderboard-accept label") if e.text == "samples")
    tick.click()
    browser.find_element(By.ID, "leaderboard-rank").click()
    wait.until(
        lambda d: "few (uploaded)" in d.find_element(By.ID, "leaderboard-table").text,
        message=f"{browser.find_element(By.ID, 'leaderboard-status').text}\n{log.read_text()[-2000:]}",
    )
    status = browser.find_element(By.ID, "leaderboard-status").text
    assert status.startswith("NOT COMPARABLE AS RECORDED: ranked despite differing samples (gpt2-large.zeroshot: 200")
    assert "few: 10, many: 40)" in status
    note = browser.find_element(By.ID, "leaderboard-note").text
    assert "NOT COMPARABLE AS RECORDED" in note and "accepted-mismatch:samples" in note and "--accept" not in note
    _full_page_screenshot(browser, ARTIFACTS / f"space_leaderboard_mismatch_{name}_ranked.png", width, mobile)
