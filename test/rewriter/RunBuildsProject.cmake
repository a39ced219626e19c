# Builds test/rewriter/builds_project through the three drop-ins in a scratch copy (cmake -P) the
# way third-party Makefiles call them, and checks that nothing a plain build does breaks:
#   MGB_CXX="log-cc g++ -DFROM_MGB_CXX" MGB_NVCC="nvcc -DFROM_MGB_NVCC" \
#     make NVCC="mgb-nvcc -ccbin g++" CC="mgb-cc -D_DEFAULT_SOURCE" CXX=mgb-c++
# (log-cc: a launcher, as ccache is, that records each command mgb-c++ runs)
# - compiler values carrying flags (NVCC exported by make; MGB_CXX's flags reach the compile and
#   the rewrite's parse), and no recursion (a wrapper that calls the driver back, nvcc running
#   mgb-c++ as its host compiler);
# - -std=c++11/c++14 and -std=c99 -pedantic-errors sources rewritten and compiled (mgb.h);
# - libmgb linked only where an input needs it: the CUDA-free tool links as with g++/nvcc, the
#   program whose mgb_ references are inside libgpu.a gets it (file, -l, linker script);
# - -x cu after the input; -M/-MM/-E/--version/-dumpversion/stdin give what the compiler gives.
# Variables: MGB_CC MGB_CXX MGB_NVCC PROJECT OUT NM
cmake_policy(VERSION 3.20) # if(IN_LIST)
foreach(var MGB_CC MGB_CXX MGB_NVCC PROJECT OUT NM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunBuildsProject.cmake: ${var} not set")
  endif()
endforeach()
find_program(READELF readelf REQUIRED)
find_program(NVCC nvcc HINTS /usr/local/cuda/bin REQUIRED)
file(REMOVE_RECURSE ${OUT})
file(COPY ${PROJECT}/ DESTINATION ${OUT})
file(WRITE ${OUT}/log-cc "#!/bin/bash\nprintf '%s ' \"$@\" >>'${OUT}/cxx.log'\necho >>'${OUT}/cxx.log'\nexec \"$@\"\n")
file(CHMOD ${OUT}/log-cc PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)

set(make ${CMAKE_COMMAND} -E env "MGB_CXX=${OUT}/log-cc g++ -DFROM_MGB_CXX"
    "MGB_NVCC=${NVCC} -DFROM_MGB_NVCC"
    make "NVCC=${MGB_NVCC} -ccbin g++" "CC=${MGB_CC} -D_DEFAULT_SOURCE" CXX=${MGB_CXX})
execute_process(COMMAND ${make} WORKING_DIRECTORY ${OUT} TIMEOUT 240
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make through the drop-ins failed (${rc}):\n${out}\n${err}")
endif()
if(err MATCHES "NOT rewritten")
  message(FATAL_ERROR "a source was not rewritten:\n${err}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/ObjectSymbols.cmake)
# Rewritten at their own standard (each calls libmgb now), the CUDA-free objects untouched.
expect_symbols("kernels.o;U mgb_launch_prepare" "kernels.o;U mgb_translate_words"
               "scale.o;U mgb_launch_prepare" "helper.o;U mgb_cudaMalloc"
               "buffers.o;U mgb_cudaMalloc" "pinned.o;U mgb_cudaMalloc"
               "libkernels.a;U mgb_launch_prepare"
               "app;T mgb_task_begin" "app_l;T mgb_task_begin" "app_script;T mgb_task_begin")
foreach(file main.o table.o gen gen_nvcc)
  symbols(${file} syms)
  if(syms MATCHES "mgb_")
    message(FATAL_ERROR "${file} should hold no mgb_ symbol:\n${syms}")
  endif()
endforeach()
file(READ ${OUT}/table.txt table)
if(NOT table STREQUAL "0\n1\n4\n9\n")
  message(FATAL_ERROR "the tool's output is wrong: '${table}'")
endif()

# The CUDA-free tool links exactly as with the plain compilers: mgb-c++ ran g++ with the Makefile's
# command and nothing added (this g++ links --as-needed, so extra libraries could go unseen in the
# binary), and both links need the same shared libraries as g++'s and nvcc's.
file(STRINGS ${OUT}/cxx.log commands)
set(expected "g++ -DFROM_MGB_CXX -std=c++11 -Wall -Werror -Itool tool/gen.cpp table.o -o gen ")
if(NOT expected IN_LIST commands)
  string(REPLACE ";" "\n" commands "${commands}")
  message(FATAL_ERROR "the tool's link is not the plain one '${expected}':\n${commands}")
endif()
function(needed file result)
  execute_process(COMMAND ${READELF} -d ${OUT}/${file} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${file} failed")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" lines "${dyn}")
  set(${result} "${lines}" PARENT_SCOPE)
endfunction()
execute_process(COMMAND g++ -std=c++11 -Wall -Werror -Itool tool/gen.cpp table.o -o gen_plain
                COMMAND_ERROR_IS_FATAL ANY WORKING_DIRECTORY ${OUT})
execute_process(COMMAND ${NVCC} -ccbin g++ -std=c++11 -Itool tool/gen.cpp table.o -o gen_nvcc_plain
                COMMAND_ERROR_IS_FATAL ANY WORKING_DIRECTORY ${OUT})
foreach(pair "gen;gen_plain" "gen_nvcc;gen_nvcc_plain")
  list(GET pair 0 driven)
  list(GET pair 1 plain)
  needed(${driven} a)
  needed(${plain} b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${driven} does not link as the plain compiler links it:\n${a}\nvs\n${b}")
  endif()
endforeach()

# Dependency files name the sources, and a second make has nothing to do.
execute_process(COMMAND ${make} WORKING_DIRECTORY ${OUT} TIMEOUT 120
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "Nothing to be done")
  message(FATAL_ERROR "a second make should have nothing to do (${rc}):\n${out}\n${err}")
endif()

# No recursion: a real-compiler value that leads back to the driver (a wrapper calling it), and
# nvcc running mgb-c++ as its host compiler (nvcc's own steps pass through unchanged).
file(WRITE ${OUT}/wrap.sh "#!/bin/bash\nexec '${MGB_CC}' \"$@\"\n")
file(CHMOD ${OUT}/wrap.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
execute_process(COMMAND ${CMAKE_COMMAND} -E env MGB_CC=${OUT}/wrap.sh
                        ${MGB_CC} -std=c99 -Isrc -c src/helper.c -o wrapped.o
                WORKING_DIRECTORY ${OUT} TIMEOUT 60 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "MGB_CC naming a wrapper around mgb-cc (${rc}):\n${err}")
endif()
execute_process(COMMAND ${MGB_NVCC} -ccbin ${MGB_CXX} -gencode arch=compute_90,code=sm_90
                        -std=c++11 -Isrc -c src/kernels.cu -o ccbin.o
                WORKING_DIRECTORY ${OUT} TIMEOUT 120 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mgb-nvcc -ccbin mgb-c++ failed (${rc}):\n${err}")
endif()
expect_symbols("wrapped.o;U mgb_cudaMalloc" "ccbin.o;U mgb_launch_prepare")
# The real nvcc running mgb-cc as its host compiler (CMake's FindCUDA configured with
# CMAKE_C_COMPILER=mgb-cc; round 12): nvcc's preprocessing and host steps pass through, strictly,
# and the object is nvcc's own (nothing rewritten: the build chose the real nvcc).
execute_process(COMMAND ${CMAKE_COMMAND} -E env MGB_STRICT=1
                        ${NVCC} -ccbin ${MGB_CC} -gencode arch=compute_90,code=sm_90
                        -std=c++11 -Isrc -c src/kernels.cu -o ccbin_real.o
                WORKING_DIRECTORY ${OUT} TIMEOUT 120 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR err MATCHES "mgb-cc")
  message(FATAL_ERROR "nvcc -ccbin mgb-cc failed or mgb-cc spoke (${rc}):\n${err}")
endif()
# MGB_ROOT with a source under another top-level directory (CMake's own compiler check, as a
# configure with MGB_ROOT set runs it): the root widens to / and stops there (it looped forever).
execute_process(COMMAND ${CMAKE_COMMAND} -E env MGB_ROOT=${OUT}/src
                        ${MGB_NVCC} -c ${CMAKE_ROOT}/Modules/CMakeCUDACompilerABI.cu -o abi.o
                WORKING_DIRECTORY ${OUT} TIMEOUT 120 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "MGB_ROOT with a source outside it (${rc}):\n${err}")
endif()
symbols(ccbin_real.o syms)
if(syms MATCHES "mgb_")
  message(FATAL_ERROR "nvcc -ccbin mgb-cc: ccbin_real.o should hold no mgb_ symbol:\n${syms}")
endif()

# strict_build(DIR WHAT SYMBOLS [ENV VAR=VALUE...] COMMAND ARG...): the command, with MGB_STRICT=1
# and ENV, in ${OUT}/DIR must succeed (else the test fails naming WHAT), and the object it made
# must hold SYMBOLS ("FILE;PATTERN" as expect_symbols takes them; empty: not checked).
function(strict_build dir what symbols)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "ENV;COMMAND")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env MGB_STRICT=1 ${arg_ENV} ${arg_COMMAND}
                  WORKING_DIRECTORY ${OUT}/${dir} TIMEOUT 120 RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} (${rc}):\n${err}")
  endif()
  if(symbols)
    expect_symbols(${symbols})
  endif()
endfunction()

# nvcc's list options (round 13, miniBUDE's CMake): `-DA=1,B=2` defines A and B, `\,` is a comma
# (`-DV=1\,2\,4`, as CMake escapes a value holding commas), `-Ia,b` names two directories. The
# parse must see what nvcc sees: strictly, the source is rewritten, as nvcc compiles it. (`V` is
# also a parameter of curand_mtgp32_kernel.h, which clang's CUDA wrapper included unasked: the
# parse failed where nvcc compiles.)
file(WRITE ${OUT}/lists/one/one.h "#define FROM_ONE 1\n")
file(WRITE ${OUT}/lists/two/two.h "#define FROM_TWO 2\n")
file(WRITE ${OUT}/lists/lists.cu "#include \"one.h\"\n#include \"two.h\"\n"
     "#if !defined(LIST_A) || !defined(LIST_B) || !defined(GONE_TOO) || defined(GONE) || FROM_ONE + FROM_TWO != 3\n"
     "#error the lists were not split\n#endif\n"
     "constexpr int values[] = {V};\nstatic_assert(sizeof(values) == 3 * sizeof(int), \"V\");\n"
     "__global__ void k(int *o) { o[0] = LIST_A + LIST_B; }\n"
     "int main() { int *d; cudaMalloc(&d, sizeof(int)); k<<<1, 1>>>(d); cudaFree(d); return 0; }\n")
strict_build(lists "nvcc's comma-separated -D/-U/-I lists" "lists/lists.o;U mgb_task_begin"
             COMMAND ${MGB_NVCC} -c lists.cu -o lists.o -DLIST_A=1,LIST_B=2 "-DV=1\\,2\\,4"
                     --define-macro=GONE,GONE_TOO -UGONE -Ione,two)

# nvcc reads NVCC_PREPEND_FLAGS and NVCC_APPEND_FLAGS as flags before and after its command line
# (round 15: lonestar's builds, with -D and -arch there): the parse sees them too, strictly.
file(WRITE ${OUT}/env_flags/e.cu "#if !defined(TILE) || !defined(FIRST)\n#error TILE and FIRST must be defined\n#endif\n"
     "__global__ void k(int *o) { o[0] = TILE; }\n"
     "int main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaFree(d); return FIRST; }\n")
strict_build(env_flags "flags from NVCC_APPEND_FLAGS/NVCC_PREPEND_FLAGS" "env_flags/e.o;U mgb_task_begin"
             ENV "NVCC_APPEND_FLAGS=-DTILE=16 -arch=sm_90" NVCC_PREPEND_FLAGS=-DFIRST=0
             COMMAND ${MGB_NVCC} -c e.cu -o e.o)

# nvcc's `-OPTION=VALUE` spellings (CMake writes `-isystem=DIR`) and OpenMP through the host
# compiler (`-Xcompiler=-fopenmp`; mgb-c++ `-fopenmp`), which defines _OPENMP (round 15: cudaKDTree's
# MPI include, QuEST's "#error ... without enabling OpenMP"): the parse sees what nvcc/g++ see.
file(WRITE ${OUT}/spellings/sys/sys_only.h "#define SYS_ONLY 1\n")
file(WRITE ${OUT}/spellings/inc/inc_only.h "#define INC_ONLY 1\n")
set(needs_openmp "#if !defined(_OPENMP)\n#error without OpenMP\n#endif\n")
file(WRITE ${OUT}/spellings/s.cu "#include <sys_only.h>\n#include <inc_only.h>\n${needs_openmp}"
     "__global__ void k(int *o) { o[0] = SYS_ONLY + INC_ONLY + EQ_DEFINED; }\n"
     "int main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaFree(d); return 0; }\n")
file(WRITE ${OUT}/spellings/h.cpp "${needs_openmp}#include <cuda_runtime.h>\n"
     "int grab() { void *p; cudaMalloc(&p, 4); return cudaFree(p); }\n")
strict_build(spellings "nvcc's -OPTION=VALUE spellings and -Xcompiler=-fopenmp"
             "spellings/s.o;U mgb_task_begin"
             COMMAND ${MGB_NVCC} -isystem=sys -I=inc -D=EQ_DEFINED=1 -Xcompiler=-fopenmp -c s.cu -o s.o)
strict_build(spellings "mgb-c++ -fopenmp" "spellings/h.o;U mgb_cudaMalloc"
             COMMAND ${MGB_CXX} -fopenmp -I/usr/local/cuda/include -c h.cpp -o h.o)

# Include directories, macros and forced includes handed to the host compiler (round 17: miniFE's
# `-Xcompiler "-I$(MPI_HOME)/include -pthread"`; nvcc's preprocessing sees them, blanks and commas
# splitting the value): the parse sees them too, strictly; and a header the rewrite changed in
# such a directory is compiled as its copy (its launch's mgb_launch_prepare), not as written.
file(WRITE ${OUT}/xcompiler/mpi/mpi_like.h "#define MPI_LIKE 1\n__global__ void k2(int *o) { *o = 2; }\n"
     "inline void twice(int *d) { k2<<<1, 1>>>(d); }\n")
file(WRITE ${OUT}/xcompiler/quoted/quoted.h "#define QUOTED 1\n")
file(WRITE ${OUT}/xcompiler/forced.h "#define FORCED 1\n")
file(WRITE ${OUT}/xcompiler/x.cu "#include <mpi_like.h>\n#include \"quoted.h\"\n"
     "#if !defined(FROM_HOST_FLAGS) || !defined(FORCED)\n#error the host flags were not seen\n#endif\n"
     "__global__ void k(int *o) { o[0] = MPI_LIKE + QUOTED; }\n"
     "int main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); twice(d); cudaFree(d); return 0; }\n")
strict_build(xcompiler "-Xcompiler's include directories and macros"
             "xcompiler/x.o;U mgb_task_begin;xcompiler/x.o;U mgb_launch_prepare"
             COMMAND ${MGB_NVCC} -Xcompiler "-Impi -pthread" -Xcompiler -iquote,quoted
                     --compiler-options=-DFROM_HOST_FLAGS,-include,forced.h -c x.cu -o x.o)

# A host compiler that wraps g++ and adds an include directory of its own (round 13: TeaLeaf's
# `nvcc -ccbin mpicxx` finding mpi.h; MGB_CXX=mpicxx for mgb-c++): the parse sees that directory.
file(WRITE ${OUT}/wrapper/inc/only_here.h "#define ONLY_HERE 3\n")
file(WRITE ${OUT}/wrapper/bin/wrapcxx "#!/bin/sh\nexec g++ -I${OUT}/wrapper/inc \"$@\"\n")
file(CHMOD ${OUT}/wrapper/bin/wrapcxx PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
file(WRITE ${OUT}/wrapper/w.cu "#include <only_here.h>\n__global__ void k(int *o) { o[0] = ONLY_HERE; }\n"
     "int main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaFree(d); return 0; }\n")
file(WRITE ${OUT}/wrapper/h.cpp "#include <only_here.h>\n#include <cuda_runtime.h>\n"
     "int grab() { void *p; cudaMalloc(&p, ONLY_HERE); return cudaFree(p); }\n")
strict_build(wrapper "mgb-nvcc -ccbin naming a wrapper that adds -I" ""
             COMMAND ${MGB_NVCC} -ccbin ${OUT}/wrapper/bin/wrapcxx -c w.cu -o w.o)
strict_build(wrapper "mgb-c++ with MGB_CXX naming a wrapper that adds -I" "wrapper/h.o;U mgb_cudaMalloc"
             ENV MGB_CXX=${OUT}/wrapper/bin/wrapcxx
             COMMAND ${MGB_CXX} -I/usr/local/cuda/include -c h.cpp -o h.o)

# A .cu that includes a .cu from a sibling directory (`#include "../lib/step.cu"`): outside the
# root the driver derives from its sources, that launch is reported and the program binds eagerly;
# MGB_ROOT widens the root so that it is rewritten; an MGB_ROOT that is no directory is an error.
file(WRITE ${OUT}/sib/lib/step.cu "__global__ void step(float *p) { p[threadIdx.x] += 1.0f; }\n"
     "void runStep(float *p) { step<<<1, 32>>>(p); }\n")
file(WRITE ${OUT}/sib/app/main.cu "#include \"../lib/step.cu\"\n"
     "int main() { float *p; cudaMalloc(&p, 128); runStep(p); cudaFree(p); return 0; }\n")
foreach(case "narrow;" "wide;MGB_ROOT=${OUT}/sib" "bad;MGB_ROOT=${OUT}/none")
  list(GET case 0 name)
  list(SUBLIST case 1 -1 env)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${MGB_NVCC} -c main.cu -o ${name}.o
                  WORKING_DIRECTORY ${OUT}/sib/app TIMEOUT 120 RESULT_VARIABLE rc_${name}
                  ERROR_VARIABLE err_${name})
endforeach()
if(NOT rc_narrow EQUAL 0 OR NOT err_narrow MATCHES "outside --root")
  message(FATAL_ERROR "the sibling .cu's launch should be reported (${rc_narrow}):\n${err_narrow}")
endif()
if(NOT rc_wide EQUAL 0 OR err_wide MATCHES "outside --root")
  message(FATAL_ERROR "MGB_ROOT should take the sibling .cu in (${rc_wide}):\n${err_wide}")
endif()
expect_symbols("sib/app/wide.o;U mgb_launch_prepare")
symbols(sib/app/narrow.o narrow_syms)
if(narrow_syms MATCHES "mgb_launch_prepare")
  message(FATAL_ERROR "without MGB_ROOT the sibling .cu's launch is not rewritten:\n${narrow_syms}")
endif()
if(NOT rc_bad EQUAL 2 OR NOT err_bad MATCHES "MGB_ROOT=.*is not a directory")
  message(FATAL_ERROR "a bad MGB_ROOT should fail with status 2 (${rc_bad}):\n${err_bad}")
endif()

# A project compiled from the top of its source tree with `-I./`, sources in subdirectories and
# a launch in a header of another subdirectory (GPUMD's Makefile, round 16): the root widens to
# that include directory, so the header's launch is rewritten (before: reported outside the root
# and bound eagerly); and with MGB_ROOT naming it, the compile finds the header's rewritten copy
# (before: `-I./` naming the root itself found the original, unreported).
file(WRITE ${OUT}/incroot/src/util/vec.cuh "#pragma once\n"
     "template <typename T> __global__ void fill_k(int n, T v, T *d) { if (threadIdx.x < n) d[threadIdx.x] = v; }\n"
     "template <typename T> struct Vec {\n  T *d = nullptr; int n = 32;\n"
     "  void fill(T v) { fill_k<<<1, 32>>>(n, v, d); }\n};\n")
file(WRITE ${OUT}/incroot/src/app/main.cu "#include \"util/vec.cuh\"\n"
     "int main() { Vec<float> v; cudaMalloc(&v.d, 128); v.fill(1.0f); cudaFree(v.d); return 0; }\n")
foreach(case "joined;;-I./" "separate;;-I;./" "root;MGB_ROOT=.;-I./")
  list(GET case 0 name)
  list(GET case 1 env)
  list(SUBLIST case 2 -1 include)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env MGB_STRICT=1 ${env} ${MGB_NVCC} ${include}
                          -c app/main.cu -o ${name}.o
                  WORKING_DIRECTORY ${OUT}/incroot/src TIMEOUT 120 RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR err MATCHES "outside --root")
    message(FATAL_ERROR "-I naming the project's source top (${name}): util/vec.cuh's launch "
                        "should be rewritten (${rc}):\n${err}")
  endif()
  expect_symbols("incroot/src/${name}.o;U mgb_launch_prepare")
  symbols(incroot/src/${name}.o syms)
  if(syms MATCHES "mgb_note_unseen_code")
    message(FATAL_ERROR "${name}: the object binds eagerly:\n${syms}")
  endif()
endforeach()

# Dependency files the compiler names itself (-MD without -o or -MF: SOURCE.d here; -Wp,-MD,FILE)
# name the sources, not the drivers' temporary copies.
file(MAKE_DIRECTORY ${OUT}/deps)
foreach(cmd "${MGB_CC};-std=c99;-I../src;-I/usr/local/cuda/include;-MD;-c;../src/helper.c"
            "${MGB_CC};-std=c99;-I../src;-I/usr/local/cuda/include;-Wp,-MD,wp.d;-c;../src/helper.c;-o;wp.o"
            "${MGB_NVCC};-std=c++11;-I../src;-MD;-c;../src/kernels.cu")
  execute_process(COMMAND ${cmd} WORKING_DIRECTORY ${OUT}/deps TIMEOUT 120 RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${cmd}' failed (${rc}):\n${err}")
  endif()
endforeach()
foreach(d helper.d wp.d kernels.d)
  file(READ ${OUT}/deps/${d} text)
  if(text MATCHES "/mgb-(nvcc|cc|c\\+\\+)\\." OR NOT text MATCHES "src/(helper.c|kernels.cu)")
    message(FATAL_ERROR "${d} names a driver's temporary copy, or not the source:\n${text}")
  endif()
endforeach()

# What the drivers print where no code is compiled is what the compilers print.
function(same_output driven plain)
  cmake_parse_arguments(arg "" "INPUT" "" ${ARGN})
  set(in "")
  if(arg_INPUT)
    set(in INPUT_FILE ${arg_INPUT})
  endif()
  execute_process(COMMAND ${driven} WORKING_DIRECTORY ${OUT} ${in} TIMEOUT 60
                  RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
  execute_process(COMMAND ${plain} WORKING_DIRECTORY ${OUT} ${in} TIMEOUT 60
                  RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2 ERROR_VARIABLE err2)
  if(NOT rc1 EQUAL rc2 OR NOT out1 STREQUAL out2)
    message(FATAL_ERROR "'${driven}' differs from '${plain}' (${rc1} vs ${rc2}):\n${out1}${err1}\n"
                        "---\n${out2}${err2}")
  endif()
endfunction()
same_output("${MGB_CC};-dumpversion" "gcc;-dumpversion")
same_output("${MGB_CXX};--version" "g++;--version")
same_output("${MGB_NVCC};--version" "${NVCC};--version")
same_output("${MGB_CXX};-std=c++11;-Isrc;-I/usr/local/cuda/include;-MM;src/buffers.cpp"
            "g++;-std=c++11;-Isrc;-I/usr/local/cuda/include;-MM;src/buffers.cpp")
same_output("${MGB_NVCC};-std=c++11;-Isrc;-M;src/kernels.cu"
            "${NVCC};-std=c++11;-Isrc;-M;src/kernels.cu")
same_output("${MGB_CXX};-E;-Itool;tool/gen.cpp" "g++;-E;-Itool;tool/gen.cpp")
same_output("${MGB_CXX};-x;c++;-Itool;-E;-o;-;-" "g++;-x;c++;-Itool;-E;-o;-;-" INPUT ${OUT}/tool/table.cpp)

# A program whose every cudart call is renamed, linked with --as-needed (Debian's and Ubuntu's gcc
# default) and -lcudart before the libmgb the driver adds: the driver names the program's cudart
# again after libmgb, or libmgb's own cudart calls stay undefined (third-party round 7).
execute_process(COMMAND ${MGB_CXX} -Wl,--as-needed -I/usr/local/cuda/include as_needed/query.cpp
                        -L/usr/local/cuda/lib64 -lcudart -o query_as_needed
                WORKING_DIRECTORY ${OUT} TIMEOUT 120 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mgb-c++ -Wl,--as-needed ... -lcudart did not link:\n${err}")
endif()
execute_process(COMMAND ${NM} ${OUT}/query_as_needed OUTPUT_VARIABLE symbols)
if(NOT symbols MATCHES "mgb_cudaMalloc")
  message(FATAL_ERROR "query_as_needed is not rewritten (no mgb_cudaMalloc)")
endif()
