/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/nw/needle 32768 10
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 32768 32768 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v1/srad 100 0.5 15000 15000
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v1/srad 100 0.5 15000 15000
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 46336 46336 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/dwt2d/dwt2d /gpusched/Benchmarks/rodinia_cuda_3.1/data/dwt2d/rgb.bmp -d 22528x22528 -f -5 -l 3
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 46336 46336 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/nw/needle 32768 10
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v1/srad 100 0.5 15000 15000
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 32768 32768 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 40960 40960 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 20480 20480 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/dwt2d/dwt2d /gpusched/Benchmarks/rodinia_cuda_3.1/data/dwt2d/rgb.bmp -d 22528x22528 -f -5 -l 3
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 20480 20480 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 36864 36864 0 127 0 127 0.5 2
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v1/srad 100 0.5 15000 15000
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/lavaMD/lavaMD -boxes1d 150
/gpusched/Benchmarks/rodinia_cuda_3.1/cuda/srad/srad_v2/srad 46336 46336 0 127 0 127 0.5 2
