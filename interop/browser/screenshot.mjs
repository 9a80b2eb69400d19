// Takes the screenshot shown in README: node screenshot.mjs URL FILE
import { chromium } from "playwright-core";

const [url, file] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
await page.goto(url);
await page.locator("#last-updated").filter({ hasNotText: "never" }).waitFor();
await page.screenshot({ path: file });
await browser.close();
