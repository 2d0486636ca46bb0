#!/usr/bin/env python3
"""The layer's scaling against bilinear, frame by frame, from two dumps of one program.

    scaling_quality.py TRUTH_DUMP SCALED_DUMP [--frames N] [--json OUT]

TRUTH_DUMP: the layer's dump (TANDEM_FRAMEGEN_DUMP) of the program drawn at the window's size,
unscaled; its "real" frames are the truth. SCALED_DUMP: the dump of the same program scaled
(TANDEM_FRAMEGEN_SCALE): its "rendered" frames are what the program drew at its smaller size, its
"real" frames what the layer presented at the window's size. The k-th real frame of one run is the
k-th of the other (a program that draws frame k the same at any size: vkcube turns 4 degrees a
frame). For each frame: the PSNR of the presented frame against the truth, and that of a bilinear
upscale of the rendered frame (texel centres, edges clamped, as vkCmdBlitImage's linear filter).
Prints one JSON object; exits 1 when a dump lacks the frames.
"""
import argparse
import json
import math
import os
import sys


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(b"\n", 3)
    if parts[0] != b"P6" or parts[2] != b"255":
        raise ValueError(f"{path} is not a binary PPM of 8-bit samples")
    width, height = (int(v) for v in parts[1].split())
    pixels = parts[3]
    if len(pixels) != width * height * 3:
        raise ValueError(f"{path} holds {len(pixels)} bytes, not {width}x{height}x3")
    return width, height, pixels


def frames(folder, kind):
    names = sorted(n for n in os.listdir(folder) if n.endswith(f"-{kind}.ppm"))
    return [os.path.join(folder, n) for n in names]


def bilinear(width, height, pixels, out_width, out_height):
    out = bytearray(out_width * out_height * 3)
    xs = []
    for x in range(out_width):
        u = (x + 0.5) * width / out_width - 0.5
        x0 = math.floor(u)
        fx = u - x0
        xs.append((min(max(x0, 0), width - 1), min(max(x0 + 1, 0), width - 1), fx))
    o = 0
    for y in range(out_height):
        v = (y + 0.5) * height / out_height - 0.5
        y0 = math.floor(v)
        fy = v - y0
        r0 = min(max(y0, 0), height - 1) * width * 3
        r1 = min(max(y0 + 1, 0), height - 1) * width * 3
        for x0, x1, fx in xs:
            a, b = r0 + x0 * 3, r0 + x1 * 3
            c, d = r1 + x0 * 3, r1 + x1 * 3
            for ch in range(3):
                top = pixels[a + ch] + (pixels[b + ch] - pixels[a + ch]) * fx
                bottom = pixels[c + ch] + (pixels[d + ch] - pixels[c + ch]) * fx
                out[o] = min(255, max(0, int(top + (bottom - top) * fy + 0.5)))
                o += 1
    return bytes(out)


def psnr(a, b):
    squared = sum((x - y) * (x - y) for x, y in zip(a, b))
    if squared == 0:
        return 99.0
    return 10.0 * math.log10(255.0 * 255.0 * len(a) / squared)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("truth")
    parser.add_argument("scaled")
    parser.add_argument("--frames", type=int, default=12, help="frames compared (default 12)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    truth = frames(args.truth, "real")
    shown = frames(args.scaled, "real")
    rendered = frames(args.scaled, "rendered")
    count = min(args.frames, len(truth), len(shown), len(rendered))
    if count == 0:
        print(f"no frames to compare: {len(truth)} true, {len(shown)} presented, "
              f"{len(rendered)} rendered", file=sys.stderr)
        return 1
    rows = []
    for k in range(count):
        tw, th, t = read_ppm(truth[k])
        sw, sh, s = read_ppm(shown[k])
        rw, rh, r = read_ppm(rendered[k])
        if (tw, th) != (sw, sh):
            print(f"frame {k}: truth {tw}x{th}, presented {sw}x{sh}", file=sys.stderr)
            return 1
        rows.append({"frame": k, "upscaled_db": round(psnr(s, t), 3),
                     "bilinear_db": round(psnr(bilinear(rw, rh, r, tw, th), t), 3)})
    result = {
        "window": [tw, th],
        "rendered": [rw, rh],
        "frames": count,
        "upscaled_db_mean": round(sum(r["upscaled_db"] for r in rows) / count, 3),
        "bilinear_db_mean": round(sum(r["bilinear_db"] for r in rows) / count, 3),
        "per_frame": rows,
    }
    result["gain_db"] = round(result["upscaled_db_mean"] - result["bilinear_db_mean"], 3)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
