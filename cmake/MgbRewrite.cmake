# mgb_rewrite(<target>): rewrite the target's .cu sources, and its C/C++ sources that call the CUDA
# runtime, with mgb-rewrite as a pre-build step, compile the rewritten copies instead, add mgb's
# include dir and link the runtime (target mgb, or mgb_runtime; mgb::runtime from find_package(mgb)
# when installed: cmake/package/mgbConfig.cmake). The runtime target carries mgb.h's directory.
#   include(MgbRewrite)          # or, installed: find_package(mgb REQUIRED)
#   add_executable(app main.cu kernels.cu cuda_helpers.c)
#   mgb_rewrite(app)
# Rewritten files go to <binary dir>/mgb-rewritten/<target>/ (paths relative to the source dir);
# each is regenerated when its source or mgb-rewrite changes. A C/C++ source (by its LANGUAGE
# property, else its extension) is rewritten, parsed as C or C++, when its own text names a
# `cudaXxx` function or includes cuda_runtime.h/cuda_runtime_api.h/cuda.h; the others are compiled
# as they are, and a change to one of them re-runs this check (CMake reconfigures).
function(mgb_rewrite target)
  if(NOT TARGET mgb-rewrite)
    message(FATAL_ERROR "mgb_rewrite(${target}): the mgb-rewrite target is not defined "
                        "(configure mgb with MGB_BUILD_REWRITER=ON)")
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/mgb-rewritten/${target})
  set(include_flags)
  get_target_property(includes ${target} INCLUDE_DIRECTORIES)
  if(includes)
    foreach(dir ${includes})
      list(APPEND include_flags -I${dir})
    endforeach()
  endif()
  # The target's definitions (with those of what it links), as the compiler sees them: a C
  # helper's CUDA code is often behind one (darknet's -DGPU).
  set(defs $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
  set(define_flags $<$<BOOL:${defs}>:-D$<JOIN:${defs},$<SEMICOLON>-D>>)
  set(new_sources)
  foreach(src ${sources})
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${source_dir})
    get_source_file_property(lang ${abs} LANGUAGE)
    set(parse_lang)
    if(lang STREQUAL "CUDA" OR (NOT lang AND abs MATCHES "\\.cu$"))
      set(parse_lang)
    elseif(lang STREQUAL "C" OR (NOT lang AND abs MATCHES "\\.c$"))
      set(parse_lang -x c)
    elseif(lang STREQUAL "CXX" OR (NOT lang AND abs MATCHES "\\.(cpp|cc|cxx|C|c\\+\\+)$"))
      set(parse_lang -x c++)
    else()
      list(APPEND new_sources ${src})
      continue()
    endif()
    if(parse_lang)
      set(calls_cuda FALSE)
      if(EXISTS ${abs})
        file(READ ${abs} text)
        if(text MATCHES "(^|[^A-Za-z0-9_])cuda[A-Z]|#[ \t]*include[ \t]*[<\"](cuda_runtime|cuda_runtime_api|cuda)\\.h[>\"]")
          set(calls_cuda TRUE)
        endif()
      endif()
      if(NOT calls_cuda)
        if(EXISTS ${abs})
          set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${abs})
        endif()
        list(APPEND new_sources ${src})
        continue()
      endif()
    endif()
    file(RELATIVE_PATH rel ${source_dir} ${abs})
    set(rewritten ${out_dir}/${rel})
    # One TU per command: a shared project header is rewritten by each, identically.
    add_custom_command(
      OUTPUT ${rewritten}
      COMMAND $<TARGET_FILE:mgb-rewrite> --root ${source_dir} -o ${out_dir} ${abs} --
              ${parse_lang} ${include_flags} "${define_flags}"
      DEPENDS ${abs} mgb-rewrite
      COMMENT "mgb-rewrite ${rel}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    if(lang)
      set_source_files_properties(${rewritten} PROPERTIES LANGUAGE ${lang})
    endif()
    list(APPEND new_sources ${rewritten})
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${new_sources})
  # The rewritten headers first, then the originals' directory (headers left unchanged).
  target_include_directories(${target} BEFORE PRIVATE ${out_dir} ${source_dir})
  if(NOT MGB_RUNTIME_TARGET)
    message(FATAL_ERROR "mgb_rewrite(${target}): no libmgb target (mgb or mgb_runtime) is defined")
  endif()
  target_link_libraries(${target} PRIVATE ${MGB_RUNTIME_TARGET})
endfunction()
