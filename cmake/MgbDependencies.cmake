# Finds the third-party pieces mgb builds on; see ../../shared/notes/toolchain.md for why each is
# found the way it is. Defines the interface target mgb::grpc (gRPC + Protobuf, shared or static).

find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(Catch2 2 REQUIRED)

add_library(mgb_grpc_deps INTERFACE)
add_library(mgb::grpc ALIAS mgb_grpc_deps)
if(MGB_STATIC_GRPC)
  # Debian's static archives, in the order pkg-config gives, inside one link group; the result needs
  # only glibc at run time, so it can be carried to the GPU machine (which has no gRPC).
  find_package(PkgConfig REQUIRED)
  execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --static --libs grpc++ protobuf
                  OUTPUT_VARIABLE mgb_static_libs OUTPUT_STRIP_TRAILING_WHITESPACE
                  COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(mgb_static_libs UNIX_COMMAND "${mgb_static_libs}")
  target_link_options(mgb_grpc_deps INTERFACE -static-libstdc++ -static-libgcc)
  target_link_libraries(mgb_grpc_deps INTERFACE
    -Wl,-Bstatic -Wl,--start-group ${mgb_static_libs} -Wl,--end-group -Wl,-Bdynamic
    Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(mgb_grpc_deps INTERFACE ${Protobuf_INCLUDE_DIRS})
else()
  target_link_libraries(mgb_grpc_deps INTERFACE gRPC::grpc++ protobuf::libprotobuf Threads::Threads)
endif()

if(MGB_BUILD_REWRITER)
  find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  find_package(Clang REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/clang)
  find_program(MGB_FILECHECK NAMES FileCheck-19 FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
  find_program(MGB_CLANG NAMES clang-19 HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
  # lit runs the rewriter's golden tests (test/rewriter/lit.cfg.py). Debian's llvm-19-tools ships it
  # as a script beside LLVM's build tree, not on PATH; an LLVM build tree has it as llvm-lit.
  find_file(MGB_LIT NAMES lit.py llvm-lit
            HINTS ${LLVM_TOOLS_BINARY_DIR}/../build/utils/lit ${LLVM_TOOLS_BINARY_DIR}
            PATHS /usr/lib/llvm-19/build/utils/lit NO_DEFAULT_PATH)
  if(NOT MGB_LIT)
    message(FATAL_ERROR "lit not found (lit.py of llvm-19-tools, under "
                        "${LLVM_TOOLS_BINARY_DIR}/../build/utils/lit): scripts/setup-deps.sh "
                        "installs it, or configure with -DMGB_LIT=/path/to/lit.py")
  endif()
endif()

if(MGB_BUILD_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "MGB_BUILD_CUDA is ON but no nvcc was found: install CUDA Toolkit 13 "
                        "(nvcc at /usr/local/cuda/bin) or configure with -DMGB_BUILD_CUDA=OFF")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)   # Hopper: the H100/H200 of the GPU machine
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
