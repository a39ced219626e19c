#!/usr/bin/env python3
"""Random plain-text PGM for Rodinia srad_v1 (data/srad/image.pgm).

srad_v1's main.cu reads "../../../data/srad/image.pgm" RELATIVE TO THE CURRENT DIRECTORY with a
fixed size of 502 rows x 458 columns (then tiles it to the Nr x Nc given on the command
line). graphics.c's read_graphics() skips exactly three '\\n'-terminated header lines and then
fscanf("%d")s rows*cols integers, so the file is: "P2", "458 502", "255", then the values
(no comment lines allowed). If the file is missing srad_v1 only prints "The file was not
opened for reading" and goes on with uninitialised data.

Usage: gen-pgm.py OUT.pgm [ROWS COLS [SEED]]     (default 502 458, as main.cu expects)
"""
import random
import sys


def main():
    a = sys.argv[1:]
    if len(a) not in (1, 3, 4):
        sys.exit(__doc__)
    path = a[0]
    rows, cols = (int(a[1]), int(a[2])) if len(a) >= 3 else (502, 458)
    rnd = random.Random(int(a[3]) if len(a) == 4 else 7)
    with open(path, 'w') as f:
        f.write(f"P2\n{cols} {rows}\n255\n")
        for _ in range(rows):
            f.write(' '.join(str(rnd.randint(0, 255)) for _ in range(cols)) + '\n')
    print(f"wrote {path}: {rows} rows x {cols} cols")


if __name__ == '__main__':
    main()
