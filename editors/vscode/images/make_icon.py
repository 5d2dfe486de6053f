"""Draws icon.png: a white eagle (bielik) with spread wings on crimson, and a caret.

Run from anywhere with Pillow installed: `python editors/vscode/images/make_icon.py`.
"""

from pathlib import Path

from PIL import Image, ImageDraw

S = 1024  # drawn large, scaled down to 256 for smooth edges
RED, WHITE, GREY = (200, 16, 46), (255, 255, 255), (255, 205, 210)


def mirror(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(S - x, y) for x, y in points]


def draw() -> Image.Image:
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((0, 0, S - 1, S - 1), radius=190, fill=RED)
    wing = [
        (470, 400), (330, 250), (160, 170), (150, 250), (215, 285), (135, 320), (150, 390),
        (225, 400), (165, 450), (195, 510), (275, 500), (240, 560), (290, 600), (360, 560),
        (470, 560),
    ]  # fmt: skip
    d.polygon(wing, fill=WHITE)
    d.polygon(mirror(wing), fill=WHITE)
    d.ellipse((432, 360, 592, 680), fill=WHITE)  # body
    d.ellipse((452, 250, 572, 370), fill=WHITE)  # head, turned right as on the arms
    d.polygon([(560, 290), (632, 318), (560, 345)], fill=WHITE)  # beak
    tail = [(462, 640), (400, 830), (470, 790), (512, 860), (554, 790), (624, 830), (562, 640)]
    d.polygon(tail, fill=WHITE)
    d.ellipse((500, 290, 522, 312), fill=RED)  # eye
    d.rectangle((762, 740, 794, 950), fill=WHITE)  # a text caret, and ghost text beside it
    d.rectangle((250, 912, 730, 944), fill=GREY)
    return img.resize((256, 256), Image.LANCZOS)


if __name__ == "__main__":
    draw().save(Path(__file__).with_name("icon.png"), optimize=True)
