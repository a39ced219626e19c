# Builds test/rewriter/whole_program with `make CC=mgb-cc CXX=mgb-c++ NVCC=mgb-nvcc` in a scratch
# copy (cmake -P), as darknet is built: the C helper and the C++ main are rewritten (their objects
# reference mgb_ twins, not the CUDA calls), the .cu too; both final links (through mgb-c++, and by
# plain gcc with $(mgb-config --libs)) pull in libmgb; the dependency files name the sources, not
# the drivers' temporary copies, so a second make has nothing to do.
# Variables: MGB_CC MGB_CXX MGB_NVCC MGB_CONFIG PROJECT OUT NM
foreach(var MGB_CC MGB_CXX MGB_NVCC MGB_CONFIG PROJECT OUT NM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunWholeProgram.cmake: ${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
file(COPY ${PROJECT}/ DESTINATION ${OUT})
set(make make CC=${MGB_CC} CXX=${MGB_CXX} NVCC=${MGB_NVCC} MGB_CONFIG=${MGB_CONFIG})
execute_process(COMMAND ${make} WORKING_DIRECTORY ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make CC=mgb-cc CXX=mgb-c++ NVCC=mgb-nvcc failed (${rc}):\n${out}\n${err}")
endif()
if(err MATCHES "NOT rewritten|error")
  message(FATAL_ERROR "a source was not rewritten:\n${err}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/ObjectSymbols.cmake)
expect_symbols("cuda.o;U mgb_cudaMalloc" "cuda.o;U mgb_cudaMemcpy" "cuda.o;U mgb_cudaFree"
             "blas_kernels.o;U mgb_launch_prepare" "blas_kernels.o;U mgb_task_begin"
             "main.o;U mgb_cudaDeviceSynchronize"
             "scaler;T mgb_task_begin" "scaler_gcc;T mgb_task_begin")
foreach(pair "cuda.o;U cuda(Malloc|Memcpy|Memset|Free)\n" "main.o;U cudaDeviceSynchronize\n")
  list(GET pair 0 file)
  list(GET pair 1 pattern)
  symbols(${file} syms)
  if(syms MATCHES "${pattern}")
    message(FATAL_ERROR "${file} still calls CUDA directly ('${pattern}'):\n${syms}")
  endif()
endforeach()
file(GLOB depfiles ${OUT}/*.d)
foreach(d ${depfiles})
  file(READ ${d} text)
  if(text MATCHES "/mgb-(nvcc|cc|c\\+\\+)\\.")
    message(FATAL_ERROR "${d} names a driver's temporary copy:\n${text}")
  endif()
endforeach()
execute_process(COMMAND ${make} WORKING_DIRECTORY ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "Nothing to be done")
  message(FATAL_ERROR "a second make should have nothing to do (${rc}):\n${out}\n${err}")
endif()
