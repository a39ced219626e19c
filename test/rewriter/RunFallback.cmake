# The drivers' parse-failure fallback (cmake -P): a source clang cannot parse (fallback/vla_init.cu
# for mgb-nvcc, fallback/nested.c for mgb-cc; both compile with nvcc/gcc) is compiled as written:
# exit 0, a warning naming the first clang error (file:line), a line in $MGB_NVCC_LOG, an object
# that calls CUDA directly and registers the unseen-code constructor (-include mgb/unseen_tu.h);
# a parsable source of the same command is still rewritten; the program links (unseen_stub.c is a
# weak mgb_note_unseen_code until libmgb has one); --mgb-strict and MGB_STRICT=1 make it an error
# (non-zero exit, no object), except that a source nvcc rejects too fails with nvcc's own errors
# and status; `mgb-rewrite --check` on the source exits non-zero. A source whose
# only clang errors are in device code (fallback/shared_init.cu) is rewritten, with no message.
# Variables: MGB_NVCC MGB_CC REWRITE SOURCE_DIR OUT NM
foreach(var MGB_NVCC MGB_CC REWRITE SOURCE_DIR OUT NM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunFallback.cmake: ${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(log ${OUT}/not-rewritten.log)
function(run)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env MGB_NVCC_LOG=${log} ${ARGN}
                  WORKING_DIRECTORY ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc ${rc} PARENT_SCOPE)
  set(err "${out}${err}" PARENT_SCOPE)
endfunction()
function(expect_symbols file present absent)
  execute_process(COMMAND ${NM} ${OUT}/${file} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm ${file} failed")
  endif()
  foreach(p ${present})
    if(NOT syms MATCHES "${p}")
      message(FATAL_ERROR "${file} lacks '${p}':\n${syms}")
    endif()
  endforeach()
  foreach(p ${absent})
    if(syms MATCHES "${p}")
      message(FATAL_ERROR "${file} has '${p}':\n${syms}")
    endif()
  endforeach()
endfunction()

# mgb-nvcc, two sources in one command: ok.cu rewritten, vla_init.cu compiled as written.
run(${MGB_NVCC} -arch=sm_90 -c ${SOURCE_DIR}/ok.cu ${SOURCE_DIR}/vla_init.cu)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mgb-nvcc on a source clang cannot parse failed (${rc}):\n${err}")
endif()
if(NOT err MATCHES "mgb-nvcc: WARNING: [^\n]*vla_init.cu is NOT rewritten: clang cannot parse it \\([^\n]*vla_init.cu:12:[0-9]+: error: variable-sized object may not be initialized\\)")
  message(FATAL_ERROR "no warning naming the first clang error:\n${err}")
endif()
if(err MATCHES "ok.cu is NOT rewritten")
  message(FATAL_ERROR "ok.cu should have been rewritten:\n${err}")
endif()
expect_symbols(vla_init.o "U mgb_note_unseen_code;U cudaMalloc;mgb_unseen_tu_note" "mgb_cuda")
expect_symbols(ok.o "U mgb_launch_prepare|U mgb_task_begin;U mgb_cudaDeviceSynchronize"
               "U cudaDeviceSynchronize")

# mgb-cc: a GCC-only C extension.
run(${MGB_CC} -Wall -c ${SOURCE_DIR}/nested.c -o nested.o)
if(NOT rc EQUAL 0 OR NOT err MATCHES "mgb-cc: WARNING: [^\n]*nested.c is NOT rewritten: clang cannot parse it \\([^\n]*nested.c:9:[0-9]+: error: ")
  message(FATAL_ERROR "mgb-cc should compile nested.c as written with a warning (${rc}):\n${err}")
endif()
expect_symbols(nested.o "U mgb_note_unseen_code;U cudaMalloc" "mgb_cuda")

file(STRINGS ${log} lines)
list(LENGTH lines count)
if(NOT count EQUAL 2 OR NOT lines MATCHES "mgb-nvcc\tnot-rewritten\t[^\t]*/vla_init.cu\t[^\t]*error: "
   OR NOT lines MATCHES "mgb-cc\tnot-rewritten\t[^\t]*/nested.c\t[^\t]*error: ")
  message(FATAL_ERROR "MGB_NVCC_LOG should hold one line per source compiled as written:\n${lines}")
endif()

# The program links (libmgb added by mgb-nvcc; the unseen note resolved by the weak stub).
run(${MGB_NVCC} -arch=sm_90 vla_init.o ok.o ${SOURCE_DIR}/unseen_stub.c -o app)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "linking the program failed (${rc}):\n${err}")
endif()
expect_symbols(app "T mgb_task_begin;[TW] mgb_note_unseen_code" "")

# Strict: an error, nothing compiled.
run(${MGB_NVCC} --mgb-strict -arch=sm_90 -c ${SOURCE_DIR}/vla_init.cu -o strict.o)
if(rc EQUAL 0 OR EXISTS ${OUT}/strict.o OR NOT err MATCHES "--mgb-strict")
  message(FATAL_ERROR "--mgb-strict should fail without compiling (${rc}):\n${err}")
endif()
run(${CMAKE_COMMAND} -E env MGB_STRICT=1 ${MGB_CC} -c ${SOURCE_DIR}/nested.c -o strict2.o)
if(rc EQUAL 0 OR EXISTS ${OUT}/strict2.o)
  message(FATAL_ERROR "MGB_STRICT=1 should fail without compiling (${rc}):\n${err}")
endif()

# Strict, and a C++ source that names cudaError_t without the CUDA runtime's headers (its own
# stand-ins, as the CUDA Handbook's CUDA-free build has): not CUDA code, so not parsed; compiled
# as written, without a warning (before: parsed with the toolkit's declarations, which clash).
file(WRITE ${OUT}/own_cuda_names.cpp "typedef int cudaError_t;\n"
     "static const cudaError_t cudaSuccess = 0;\n"
     "static inline cudaError_t cudaGetDeviceCount(int *p) { *p = 0; return cudaSuccess; }\n"
     "int devices() { int n; return cudaGetDeviceCount(&n) == cudaSuccess ? n : -1; }\n")
file(REMOVE ${log})
run(${CMAKE_COMMAND} -E env MGB_STRICT=1 ${MGB_CC} -c own_cuda_names.cpp -o own_cuda_names.o)
if(NOT rc EQUAL 0 OR NOT EXISTS ${OUT}/own_cuda_names.o OR err MATCHES "WARNING|error" OR EXISTS ${log})
  message(FATAL_ERROR "a source with its own cuda* names should compile as written, quietly (${rc}):\n${err}")
endif()
expect_symbols(own_cuda_names.o "" "mgb_")

# Strict, and the source is broken as written (nvcc rejects it too): the build fails as it would
# without mgb, with nvcc's own error and exit status, and nothing is made.
file(WRITE ${OUT}/broken.cu "__global__ void k(int *p) { p[0] = 1; }\n"
     "int main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); no_such_function(d); return 0; }\n")
find_program(NVCC nvcc HINTS /usr/local/cuda/bin REQUIRED)
run(${NVCC} -arch=sm_90 -c broken.cu -o broken_plain.o)
set(plain_rc ${rc})
run(${CMAKE_COMMAND} -E env MGB_STRICT=1 ${MGB_NVCC} -arch=sm_90 -c broken.cu -o broken.o)
if(plain_rc EQUAL 0 OR NOT rc EQUAL plain_rc OR EXISTS ${OUT}/broken.o
   OR NOT err MATCHES "identifier \"no_such_function\" is undefined")
  message(FATAL_ERROR "strict, broken as written: nvcc's error and status (${plain_rc}) expected, "
                      "got ${rc}:\n${err}")
endif()
# The same without -o (miniFE's Makefile: `nvcc -c main.cu`, the object beside the source).
run(${CMAKE_COMMAND} -E env MGB_STRICT=1 ${MGB_NVCC} -arch=sm_90 -c broken.cu)
if(NOT rc EQUAL plain_rc OR EXISTS ${OUT}/broken.o OR NOT err MATCHES "identifier \"no_such_function\" is undefined")
  message(FATAL_ERROR "strict, broken as written, no -o: nvcc's error and status (${plain_rc}) expected, "
                      "got ${rc}:\n${err}")
endif()
# ... but with a second input (a plain C++ file) nvcc would refuse the scratch -o: no probe, the
# strict error stands (not nvcc's complaint about -o).
file(WRITE ${OUT}/plain.cpp "int plain() { return 1; }\n")
run(${CMAKE_COMMAND} -E env MGB_STRICT=1 ${MGB_NVCC} -arch=sm_90 -c broken.cu plain.cpp)
if(rc EQUAL 0 OR err MATCHES "single input file" OR NOT err MATCHES "could not be rewritten: broken.cu")
  message(FATAL_ERROR "strict, two inputs, no -o: the strict error expected, got ${rc}:\n${err}")
endif()

# CI: --check on the source fails.
run(${REWRITE} --check ${SOURCE_DIR}/vla_init.cu --)
if(rc EQUAL 0)
  message(FATAL_ERROR "mgb-rewrite --check on a source it cannot parse should exit non-zero")
endif()

# Device-only clang errors: rewritten (no warning, no log line, no unseen note), even strict.
file(REMOVE ${log})
run(${MGB_NVCC} --mgb-strict -arch=sm_90 -c ${SOURCE_DIR}/shared_init.cu -o shared_init.o)
if(NOT rc EQUAL 0 OR err MATCHES "NOT rewritten|error:" OR EXISTS ${log})
  message(FATAL_ERROR "shared_init.cu (device-only clang error) should be rewritten (${rc}):\n${err}")
endif()
expect_symbols(shared_init.o "U mgb_task_begin;U mgb_cudaMalloc" "mgb_note_unseen_code")

# mgb-rewrite failing after a warning (round 17: an edit conflict reported after thrust's
# warning): the message names its own error line, not the warning before it.
file(WRITE ${OUT}/failing-rewrite.sh "#!/bin/sh\necho 'In file included from ok.cu:1:'\necho 'ok.cu:1:1: warning: something harmless'\necho '    1 | int x;'\necho 'mgb-rewrite: The new replacement overlaps with an existing replacement.'\nexit 1\n")
file(CHMOD ${OUT}/failing-rewrite.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
run(${CMAKE_COMMAND} -E env MGB_REWRITE=${OUT}/failing-rewrite.sh ${MGB_NVCC} -arch=sm_90 -c
    ${SOURCE_DIR}/ok.cu -o failing.o)
if(NOT rc EQUAL 0 OR NOT err MATCHES "mgb-rewrite exited with status 1: mgb-rewrite: The new replacement overlaps")
  message(FATAL_ERROR "the fallback's message should name mgb-rewrite's own error (${rc}):\n${err}")
endif()
