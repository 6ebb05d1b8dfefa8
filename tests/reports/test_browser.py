#!/usr/bin/python3
"""The report in a real browser: headless Chromium (Debian's chromium, installed by
scripts/install-deps) opens index.html built from the shipped records at 1280 x 800 and
  - the summary ends above the fold (measured in the page, and seen in the screenshot: the line
    that closes the summary is among the PNG's pixels),
  - every image the page references exists and the browser decoded it,
  - red cells are red.
With --screenshot FILE it also keeps the screenshot, and --with FILE passes more records to the
report (the README's picture of the summary, as the main job shows it without a GPU:
  build/off/flashprobe probe --simulate --all --json /tmp/sim.json
  tests/reports/test_browser.py --screenshot reports/summary.png --with /tmp/sim.json).
Exit 0 pass, 1 fail (a missing browser is a failure: the check did not run)."""
import html as htmllib, json, os, re, shutil, subprocess, sys, tempfile, unittest

from fixtures import DATA, ROOT, read_text

WIDTH, HEIGHT = 1280, 800
END_RGB = (40, 90, 160)  # the rule that closes the summary (build_report.py, #summary-end)
PROBE = ("<script>window.addEventListener('load',()=>{"
         "const s=document.getElementById('summary').getBoundingClientRect();"
         "const bad=document.querySelector('#summary td.bad');"
         "document.body.setAttribute('data-probe',JSON.stringify({bottom:s.bottom,fold:window.innerHeight,"
         "width:document.getElementById('summary').scrollWidth,page:document.documentElement.scrollWidth,view:window.innerWidth,"
         "images:[...document.images].map(i=>[i.getAttribute('src'),i.complete&&i.naturalWidth>0]),"
         "red:bad?getComputedStyle(bad).color:null}));});</script>")
KEEP = None
WITH = []


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def chromium(args, timeout=120):
    cmd = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
           f"--window-size={WIDTH},{HEIGHT}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class InTheBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not browser():
            raise unittest.SkipTest("no chromium")  # turned into a failure in main()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = cls.tmp.name
        extra = [x for w in WITH for x in ("--with", w)]
        p = subprocess.run([os.path.join(ROOT, "reports", "build_report.py"), "--data", DATA, "--out", cls.out, *extra],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(f"build_report failed: {p.stderr}")
        cls.page = read_text(os.path.join(cls.out, "index.html"))
        with open(os.path.join(cls.out, "probe.html"), "w") as f:
            f.write(cls.page.replace("</body>", PROBE + "</body>"))
        dom = chromium(["--dump-dom", "file://" + os.path.join(cls.out, "probe.html")])
        m = re.search(r'data-probe="([^"]*)"', dom.stdout)
        cls.probe = json.loads(htmllib.unescape(m.group(1))) if m else None
        cls.shot = os.path.join(cls.out, "summary.png")
        cls.shot_run = chromium([f"--screenshot={cls.shot}", "file://" + os.path.join(cls.out, "index.html")])

    @classmethod
    def tearDownClass(cls):
        if KEEP and os.path.isfile(cls.shot):
            shutil.copyfile(cls.shot, KEEP)
        cls.tmp.cleanup()

    def test_summary_above_the_fold(self):
        self.assertIsNotNone(self.probe, "the page's probe script did not report")
        self.assertLessEqual(self.probe["bottom"], self.probe["fold"],
                             f"the summary ends at {self.probe['bottom']:.0f} px, the fold is at {self.probe['fold']} px")
        self.assertLessEqual(self.probe["width"], self.probe["view"], "the summary is wider than the window")
        self.assertLessEqual(self.probe["page"], self.probe["view"], "the page scrolls sideways")

    def test_screenshot_shows_the_end_of_the_summary(self):
        from PIL import Image
        self.assertTrue(os.path.isfile(self.shot), self.shot_run.stderr[-2000:])
        with Image.open(self.shot) as im:
            self.assertEqual(im.size, (WIDTH, HEIGHT))
            px = im.convert("RGB").load()
            rows = [y for y in range(HEIGHT) if sum(1 for x in range(0, WIDTH, 4) if px[x, y] == END_RGB) > WIDTH // 8]
        self.assertTrue(rows, "the line that closes the summary is not in the screenshot")

    def test_every_image_exists_and_decodes(self):
        srcs = re.findall(r"<img src='([^']+)'", self.page)
        self.assertTrue(srcs)
        for s in srcs:
            self.assertTrue(os.path.isfile(os.path.join(self.out, s)), f"{s} is referenced but missing")
        loaded = dict(self.probe["images"])
        self.assertEqual(set(loaded), set(srcs))
        self.assertEqual([s for s, ok in loaded.items() if not ok], [], "images the browser could not decode")

    def test_red_is_red(self):
        self.assertIsNotNone(self.probe["red"], "no red cell in the summary")  # the gate's skips are red today
        r, g, b = map(int, re.findall(r"\d+", self.probe["red"])[:3])
        self.assertTrue(r > 120 and g < 60 and b < 60, self.probe["red"])


def main():
    global KEEP
    for opt in ("--screenshot", "--with"):
        while opt in sys.argv:
            i = sys.argv.index(opt)
            if opt == "--screenshot":
                KEEP = os.path.abspath(sys.argv[i + 1])
            else:
                WITH.append(os.path.abspath(sys.argv[i + 1]))
            del sys.argv[i:i + 2]
    if not browser():
        print("FAIL: no headless browser (chromium); scripts/install-deps installs Debian's chromium")
        return 1
    r = unittest.main(exit=False).result
    return 0 if r.wasSuccessful() and not r.skipped else 1


if __name__ == "__main__":
    sys.exit(main())
