#!/usr/bin/env python3
"""Random 24-bit BMP of a given size, the input of Rodinia dwt2d (rgb.bmp).

dwt2d's getImg() does not parse the BMP: it read()s the first width*height*3 bytes of the
file (header included) as interleaved 8-bit RGB, so any file of at least that size works;
this writes a valid BMP (54-byte header + rows padded to 4 bytes) so image tools accept it.

Usage: gen-bmp.py WIDTH HEIGHT OUT.bmp [SEED]      e.g. gen-bmp.py 8192 8192 rgb.bmp
"""
import os
import random
import struct
import sys


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    w, h, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    seed = int(sys.argv[4]) if len(sys.argv) == 5 else 7
    if w <= 0 or h <= 0:
        sys.exit("WIDTH and HEIGHT must be positive")
    row = w * 3
    pad = (4 - row % 4) % 4
    size = 54 + (row + pad) * h
    header = struct.pack('<2sIHHI', b'BM', size, 0, 0, 54)
    info = struct.pack('<IiiHHIIiiII', 40, w, h, 1, 24, 0, (row + pad) * h, 2835, 2835, 0, 0)
    rnd = random.Random(seed)
    with open(path, 'wb') as f:
        f.write(header + info)
        # a block of random rows, repeated with a per-row rotation (fast for 8192x8192)
        block = [rnd.randbytes(row) + b'\0' * pad for _ in range(64)] if hasattr(rnd, 'randbytes') \
            else [os.urandom(row) + b'\0' * pad for _ in range(64)]
        for y in range(h):
            r = block[y % 64]
            k = (y * 3 * 7) % row
            f.write(r[k:row] + r[:k] + r[row:])
    print(f"wrote {path}: {w}x{h} 24-bit, {size} bytes (dwt2d reads the first {w * h * 3})")


if __name__ == '__main__':
    main()
