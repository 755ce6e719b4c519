// envhub view: highlight the steps that share an anchor when one is hovered (pages work without it).
document.addEventListener("DOMContentLoaded", () => {
  const cells = Array.from(document.querySelectorAll("td.cell"));
  const toneOf = (el) => Array.from(el.classList).find((c) => /^ag\d+$/.test(c));
  for (const cell of cells) {
    const tone = toneOf(cell);
    if (!tone) continue;
    cell.addEventListener("mouseenter", () => cells.forEach((c) => c.classList.toggle("hl", toneOf(c) === tone)));
    cell.addEventListener("mouseleave", () => cells.forEach((c) => c.classList.remove("hl")));
  }
});
