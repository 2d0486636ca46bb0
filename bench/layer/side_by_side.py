#!/usr/bin/env python3
"""Puts PPM frames (the layer's dump) side by side in one PNG, each scaled by a whole factor.

    side_by_side.py OUT.png SCALE FRAME.ppm...

Standard library only (zlib), so that it runs wherever the tests run."""
import struct
import sys
import zlib


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, size, depth, pixels = data.split(b"\n", 3)
    if magic != b"P6" or depth != b"255":
        sys.exit(f"{path}: not a binary 8-bit PPM")
    width, height = map(int, size.split())
    return width, height, pixels


def write_png(path, width, height, rgb):
    rows = b"".join(b"\0" + rgb[y * width * 3:(y + 1) * width * 3] for y in range(height))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def main():
    out, scale, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    frames = [read_ppm(p) for p in paths]
    width, height = frames[0][0], frames[0][1]
    if any((w, h) != (width, height) for w, h, _ in frames):
        sys.exit("the frames differ in size")
    gap = 4
    rows = []
    for y in range(height * scale):
        row = bytearray()
        for i, (_, _, pixels) in enumerate(frames):
            line = pixels[(y // scale) * width * 3:(y // scale + 1) * width * 3]
            for x in range(width):
                row += line[x * 3:x * 3 + 3] * scale
            if i + 1 < len(frames):
                row += b"\xff\xff\xff" * gap
        rows.append(bytes(row))
    total = len(frames) * width * scale + (len(frames) - 1) * gap
    write_png(out, total, height * scale, b"".join(rows))


if __name__ == "__main__":
    main()
