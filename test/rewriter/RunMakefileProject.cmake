# Builds test/rewriter/makefile_project with `make NVCC=<mgb-nvcc>` in a scratch copy (cmake -P):
# every .cu (and the `-x cu` .cpp) must be rewritten (their objects reference mgb_ probes), the
# host-only .cpp passed through, and the link must pull in libmgb (mgb_ symbols defined).
# Variables: MGB_NVCC PROJECT OUT NM
foreach(var MGB_NVCC PROJECT OUT NM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunMakefileProject.cmake: ${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
file(COPY ${PROJECT}/ DESTINATION ${OUT})
execute_process(COMMAND make NVCC=${MGB_NVCC} WORKING_DIRECTORY ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make NVCC=mgb-nvcc failed (${rc}):\n${out}\n${err}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/ObjectSymbols.cmake)
expect_symbols("alloc.o;U mgb_cudaMalloc" "scale.o;mgb_prepare" "offset.o;mgb_prepare"
             "scale_app;T mgb_prepare|T mgb_launch_prepare" "twin_app;T mgb_prepare|T mgb_launch_prepare")
symbols(main.o syms)
if(syms MATCHES "mgb_")
  message(FATAL_ERROR "main.o (host-only .cpp) should pass through unchanged")
endif()
