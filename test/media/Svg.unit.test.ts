/**
 * The SVG sanitizer against hostile input: what could run (scripts, event handlers, `javascript:`
 * links, foreignObject's HTML) or fetch (external `use`, `image`, `url(...)`, `@import`) is gone,
 * while the drawing and its in-document references (`#id`) stay.
 */
import { describe, expect, it } from "vitest"
import { renderPromptSvg, sanitizeSvg } from "../../src/media/Svg.ts"

const wrap = (body: string, rootAttributes = "") =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"${rootAttributes}>${body}</svg>`

describe("sanitizeSvg", () => {
  it.each([
    ["a script element and its code", wrap(`<script>alert("x")</script><rect width="1" height="1"/>`), ["<script", "alert"]],
    ["a script in CDATA", wrap(`<script><![CDATA[fetch("//evil")]]></script>`), ["<script", "fetch"]],
    ["onload on the root", wrap(`<rect width="1" height="1"/>`, ` onload="alert(1)"`), ["onload", "alert"]],
    ["event handlers on shapes", wrap(`<circle r="2" onclick="steal()" onmouseover="steal()"/>`), ["onclick", "onmouseover", "steal"]],
    ["a javascript: link", wrap(`<a href="javascript:alert(1)"><rect width="1" height="1"/></a>`), ["javascript", "<a"]],
    ["a javascript: xlink:href on use", wrap(`<use xlink:href="javascript:alert(1)"/>`), ["javascript"]],
    ["an external use", wrap(`<use href="https://evil.example/sprite.svg#icon"/><use xlink:href="//evil.example/s.svg#i"/>`), ["evil.example"]],
    ["a data: use", wrap(`<use href="data:image/svg+xml;base64,PHN2Zz4="/>`), ["data:"]],
    ["foreignObject with HTML", wrap(`<foreignObject width="9" height="9"><body xmlns="http://www.w3.org/1999/xhtml"><iframe src="https://evil.example"></iframe><p>hi</p></body></foreignObject>`), ["foreignObject", "iframe", "evil.example", "<p"]],
    ["an external image", wrap(`<image href="https://evil.example/track.png" width="1" height="1"/>`), ["<image", "evil.example"]],
    ["a style element with @import", wrap(`<style>@import url("https://evil.example/x.css");</style>`), ["<style", "@import", "evil.example"]],
    ["an inline style attribute", wrap(`<rect style="background:url(https://evil.example/x)" width="1" height="1"/>`), ["style=", "evil.example"]],
    ["a paint server out of the document", wrap(`<rect fill="url(https://evil.example/p.svg#g)" width="1" height="1"/>`), ["evil.example"]],
    ["animation setting an href", wrap(`<a><set attributeName="href" to="javascript:alert(1)"/></a>`), ["<set", "javascript"]],
    ["an entity declaration", `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>${wrap(`<text>&x;</text>`)}`, ["ENTITY", "/etc/passwd"]]
  ])("removes %s", (_, hostile, absent) => {
    const clean = sanitizeSvg(hostile)
    for (const text of absent) expect(clean).not.toContain(text)
    expect(clean).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
  })

  it("keeps the drawing and references inside the document", () => {
    const drawing = wrap(
      `<defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient><symbol id="dot"><circle r="2"/></symbol></defs>` +
        `<rect width="10" height="10" fill="url(#g)"/><use href="#dot" x="3"/><text x="1" y="9">hello &amp; bye</text>`
    )
    expect(sanitizeSvg(drawing)).toBe(
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><linearGradient id="g"><stop offset="0" stop-color="red"></stop></linearGradient><symbol id="dot"><circle r="2"></circle></symbol></defs>` +
        `<rect width="10" height="10" fill="url(#g)"></rect><use href="#dot" x="3"></use><text x="1" y="9">hello &amp; bye</text></svg>`
    )
  })

  it("gives a root namespace to SVG without one, and an empty SVG for input without any", () => {
    expect(sanitizeSvg(`<svg width="2"><rect width="1" height="1"/></svg>`)).toBe(`<svg xmlns="http://www.w3.org/2000/svg" width="2"><rect width="1" height="1"></rect></svg>`)
    expect(sanitizeSvg(`<script>alert(1)</script>`)).toBe(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)
  })

  it("the offline drawing of a prompt is stable, sized as asked, and its prompt escaped", () => {
    const svg = renderPromptSvg(`a <cat> & "dog"`, 300, 200)
    expect(renderPromptSvg(`a <cat> & "dog"`, 300, 200)).toBe(svg)
    expect(renderPromptSvg("another prompt", 300, 200)).not.toBe(svg)
    expect(svg).toContain(`width="300" height="200"`)
    expect(sanitizeSvg(svg)).toContain(`<title>a &lt;cat&gt; &amp; "dog"</title>`)
  })
})
