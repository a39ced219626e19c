# Configures and builds test/rewriter/cmake_project with -DCMAKE_CUDA_COMPILER=<mgb-nvcc> (cmake -P),
# as a user would build an unchanged third-party CMake project: CMake's CUDA compiler checks must
# pass through mgb-nvcc, every .cu object must reference mgb probes, the C++ object must not, and
# both executables must be linked with libmgb (scale_host has only C++ sources: CMake links it
# with the C++ compiler).
# Variables: MGB_NVCC PROJECT OUT NM
foreach(var MGB_NVCC PROJECT OUT NM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunCMakeProject.cmake: ${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${PROJECT} -B ${OUT} -DCMAKE_CUDA_COMPILER=${MGB_NVCC}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring with CMAKE_CUDA_COMPILER=mgb-nvcc failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building with CMAKE_CUDA_COMPILER=mgb-nvcc failed (${rc}):\n${out}\n${err}")
endif()
foreach(pair "CMakeFiles/kernels.dir/kernels.cu.o;U mgb_launch_prepare"
             "CMakeFiles/scale_cmake.dir/main.cu.o;U mgb_cudaMalloc"
             "scale_cmake;T mgb_task_begin" "scale_host;T mgb_task_begin")
  list(GET pair 0 file)
  list(GET pair 1 pattern)
  execute_process(COMMAND ${NM} -C ${OUT}/${file} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT syms MATCHES "${pattern}")
    message(FATAL_ERROR "${file} does not match '${pattern}': not rewritten or not linked with libmgb")
  endif()
endforeach()
execute_process(COMMAND ${NM} -C ${OUT}/CMakeFiles/scale_cmake.dir/report.cpp.o OUTPUT_VARIABLE syms)
if(syms MATCHES "mgb_")
  message(FATAL_ERROR "report.cpp.o (host-only C++) should not reference mgb")
endif()
