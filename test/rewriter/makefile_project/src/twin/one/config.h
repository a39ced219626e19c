// Same name as ../two/config.h, different contents: each .cu must see its own (Rodinia's dwt2d
// has dwt.h beside main.cu and another dwt.h in dwt_cuda/).
#pragma once
#define ONE_SCALE 2
int run_two(float *host, int n);
