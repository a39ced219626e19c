# mgb_rewrite(<target>): rewrite the target's .cu sources with mgb-rewrite as a pre-build step,
# compile the rewritten copies instead, add mgb's include dir and link the runtime (target mgb, or mgb_runtime).
#   include(MgbRewrite)
#   add_executable(app main.cu kernels.cu)
#   mgb_rewrite(app)
# Rewritten files go to <binary dir>/mgb-rewritten/<target>/ (paths relative to the source dir);
# each is regenerated when its source or mgb-rewrite changes.
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
  set(new_sources)
  foreach(src ${sources})
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${source_dir})
    if(NOT abs MATCHES "\\.cu$")
      list(APPEND new_sources ${src})
      continue()
    endif()
    file(RELATIVE_PATH rel ${source_dir} ${abs})
    set(rewritten ${out_dir}/${rel})
    # One TU per command: a shared project header is rewritten by each, identically.
    add_custom_command(
      OUTPUT ${rewritten}
      COMMAND $<TARGET_FILE:mgb-rewrite> --root ${source_dir} -o ${out_dir} ${abs} --
              ${include_flags}
      DEPENDS ${abs} mgb-rewrite
      COMMENT "mgb-rewrite ${rel}"
      VERBATIM)
    list(APPEND new_sources ${rewritten})
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${new_sources})
  # The rewritten headers first, then the originals' directory (headers left unchanged).
  target_include_directories(${target} BEFORE PRIVATE ${out_dir} ${source_dir})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
  if(NOT MGB_RUNTIME_TARGET)
    message(FATAL_ERROR "mgb_rewrite(${target}): no libmgb target (mgb or mgb_runtime) is defined")
  endif()
  target_link_libraries(${target} PRIVATE ${MGB_RUNTIME_TARGET})
endfunction()
