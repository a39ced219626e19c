"""A Python program that allocates device memory through ctypes into libcudart.so, as frameworks
(CuPy, PyTorch's allocator) reach the CUDA runtime: a stand-in for them in the guard's GPU test.
Usage: python3 ctypes_alloc.py MIB HOLD_S"""
import ctypes
import sys
import time

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 0
cudart = ctypes.CDLL("libcudart.so")
pointer = ctypes.c_void_p()
error = cudart.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(mib << 20))
if error != 0:
    print(f"ctypes_alloc: cudaMalloc failed with {error}")
    sys.exit(1)
free, total = ctypes.c_size_t(), ctypes.c_size_t()
cudart.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
print(f"ctypes_alloc: {mib} MiB ok; cudaMemGetInfo free={free.value >> 20} total={total.value >> 20} MiB")
time.sleep(hold)
cudart.cudaFree(pointer)
